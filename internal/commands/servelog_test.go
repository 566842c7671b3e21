package commands

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdJSONLines checks that every line of a file (or of stdout or stderr) is a JSON object
// with time, level and msg, as slog's JSON handler writes them:
//
//	jsonlines stderr
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonlines FILE|stdout|stderr")
	}
	text := ts.ReadFile(args[0])
	bad := ""
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			bad = fmt.Sprintf("%s: line %d: %v: %s", args[0], i+1, err, line)
			break
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := rec[k].(string); !ok {
				bad = fmt.Sprintf("%s: line %d has no string %s: %s", args[0], i+1, k, line)
			}
		}
		if bad != "" {
			break
		}
	}
	switch {
	case neg && bad == "":
		ts.Fatalf("every line of %s is a JSON log record", args[0])
	case !neg && bad != "":
		ts.Fatalf("%s", bad)
	}
}
