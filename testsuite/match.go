package testsuite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// equal compares JSON values exactly (numbers as float64, as both sides decode).
func equal(want, got any) bool { return reflect.DeepEqual(norm(want), norm(got)) }

// contains reports whether got has everything want has: every key of a wanted object (at
// any depth), lists of the same length whose items contain the wanted ones, equal scalars.
// It returns the path of the first difference.
func contains(want, got any, path string) (bool, string) {
	switch w := norm(want).(type) {
	case map[string]any:
		g, ok := norm(got).(map[string]any)
		if !ok {
			return false, path
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return false, join(path, k)
			}
			if ok, p := contains(w[k], gv, join(path, k)); !ok {
				return false, p
			}
		}
		return true, ""
	case []any:
		g, ok := norm(got).([]any)
		if !ok || len(g) != len(w) {
			return false, path
		}
		for i := range w {
			if ok, p := contains(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return false, p
			}
		}
		return true, ""
	default:
		return equal(w, got), path
	}
}

// norm turns Go values (ints, typed maps) into their JSON-decoded form.
func norm(v any) any {
	switch v.(type) {
	case nil, bool, float64, string, map[string]any, []any:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// show renders a value for a message: compact JSON.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
