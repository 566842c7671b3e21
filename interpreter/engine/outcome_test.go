package engine

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestOutcomeEventCompleted: a completed try records its output as json.Marshal of the result
// writes it (compacted, escaped, invalid UTF-8 kept as json.Valid lets it through), and output
// that is missing or not JSON as null.
func TestOutcomeEventCompleted(t *testing.T) {
	build := "ab12"
	for _, c := range []struct {
		out, want string
	}{
		{`{"ok": true, "id": "x"}`, `{"ok":true,"id":"x"}`},
		{`"<b>"`, `"\u003cb\u003e"`},
		{"", `null`},
		{`{"bad":`, `null`},
		{"\"\xff\"", "\"\xff\""},
	} {
		ev := outcomeEvent(activityTask{Step: "s", ExecID: "x", Attempt: 1}, callResult{out: json.RawMessage(c.out), build: build})
		want := history.MustData(history.ActivityResult{Output: json.RawMessage(c.want), PluginSHA256: build})
		if ev.Type != history.ActivityCompleted || !bytes.Equal(ev.Data, want) {
			t.Errorf("output %q: %s %s, want %s", c.out, ev.Type, ev.Data, want)
		}
	}
}
