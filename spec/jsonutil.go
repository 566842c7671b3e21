package spec

import "encoding/json"

func compactJSON(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return "<unprintable>"
	}
	return string(b)
}
