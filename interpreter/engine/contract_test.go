package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/wendflow/wend/spec"
)

// TestSignalContractRefusedRunUntouched: a signal the workflow does not declare, or data its
// schema refuses, is refused with spec's sentinel before anything reaches the run: its history
// is unchanged and a good signal afterwards is the one the wait takes.
func TestSignalContractRefusedRunUntouched(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"signals:\n  go: {schema: {type: object, required: [n], properties: {n: {type: integer}}}}\n"+
		"steps:\n  - {id: a, wait_for_signal: go}\noutput: \"${{ steps.a.output.n }}\"\n")
	r := h.start(f, "w", "null")
	before, _ := h.store.Events(r.RunID, 0)
	ctx := context.Background()
	for _, c := range []struct {
		name, data string
		want       error
	}{
		{"og", `{"n":1}`, spec.ErrUndeclaredSignal},
		{"go", `{"n":"one"}`, spec.ErrSignalData},
		{"go", ``, spec.ErrSignalData},
	} {
		if _, err := h.e.SendSignal(ctx, SignalRequest{WorkflowID: "w", Name: c.name, Data: json.RawMessage(c.data), ID: "s-1"}); !errors.Is(err, c.want) {
			t.Fatalf("%s %s: %v, want %v", c.name, c.data, err, c.want)
		}
	}
	if after, _ := h.store.Events(r.RunID, 0); !reflect.DeepEqual(before, after) {
		t.Fatalf("refused signals changed the history: %d events, then %d", len(before), len(after))
	}
	if dup, err := h.e.SendSignal(ctx, SignalRequest{WorkflowID: "w", Name: "go", Data: json.RawMessage(`{"n":2}`), ID: "s-1"}); err != nil || dup {
		t.Fatalf("good signal: duplicate %v, %v", dup, err)
	}
	if got := h.output(h.wait("w")); got != "2" {
		t.Fatalf("output %s, want 2", got)
	}
}
