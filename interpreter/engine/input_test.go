package engine

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestAbsentInputIsEmptyObject: `input.n ?? 0` passes validate, but a run started
// without input failed with "cannot fetch n from <nil>". No input, or null, is {} for a run
// and for a run_workflow child without `with`; an explicit input is kept as given.
func TestAbsentInputIsEmptyObject(t *testing.T) {
	h := newHarness(t)
	h.write("child.wend.yaml", head+"steps: [{delay: 1s}]\noutput: \"${{ input.n ?? 'child default' }}\"\n")
	f := h.write("w.wend.yaml", head+`
steps:
  - {id: k, run_workflow: ./child.wend.yaml}
output: {n: "${{ input.n ?? 0 }}", input: "${{ input }}", child: "${{ steps.k.output }}"}
`)
	for _, tc := range []struct{ name, input, want string }{
		{"absent", "", `{"child":"child default","input":{},"n":0}`},
		{"null", "null", `{"child":"child default","input":{},"n":0}`},
		{"given", `{"n": 7}`, `{"child":"child default","input":{"n":7},"n":7}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := h.e.Start(context.Background(), StartRequest{WorkflowID: tc.name, SpecFile: f, Source: string(src), Input: json.RawMessage(tc.input)})
			if err != nil {
				t.Fatal(err)
			}
			r = h.wait(tc.name)
			if r.Status != history.StatusCompleted || h.output(r) != tc.want {
				t.Fatalf("%s: %s, want %s", r.Status, h.output(r), tc.want)
			}
		})
	}
}

// TestResendWithoutInputIsTheSameStart: with an absent input recorded as {}, a resend of the
// same start without input (empty, null or {}) is the same start, as is one against a run
// recorded before the rule with input null; a real input differs.
func TestResendWithoutInputIsTheSameStart(t *testing.T) {
	for _, tc := range []struct {
		recorded, sent string
		same           bool
	}{
		{`{}`, ``, true},
		{`{}`, `null`, true},
		{`{}`, ` { } `, true},
		{`null`, ``, true},
		{`null`, `{}`, true},
		{`{"a":1}`, `{ "a": 1 }`, true},
		{`{}`, `{"a":1}`, false},
		{`null`, `[]`, false},
		{`{}`, `not json`, false},
	} {
		if got := sameJSON(json.RawMessage(tc.recorded), json.RawMessage(tc.sent)); got != tc.same {
			t.Errorf("recorded %s, sent %q: same = %v, want %v", tc.recorded, tc.sent, got, tc.same)
		}
	}
}
