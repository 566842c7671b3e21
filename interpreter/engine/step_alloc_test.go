package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestSequentialStepAllocations: a step of a sequential run in process (an echo call,
// the in-memory store, a literal `with`) allocates at most 48 times, the difference between a
// 110-step and a 10-step run over 100 (56 with the literal evaluated and encoded at every start,
// a carrier, an answer channel and a map of held slots made at every report, and each step's
// output wrapped for expressions whether one read it or not; 35 now, 42 under -race): a bound
// on what every step feeds the garbage collector.
func TestSequentialStepAllocations(t *testing.T) {
	e := New(Options{Store: history.NewMemStore(), Activities: &fakeActs{}, MaxActivities: 512})
	defer e.Close()
	n := 0
	perRun := func(steps int) float64 {
		var src strings.Builder
		src.WriteString(head + "steps:\n")
		for i := range steps {
			fmt.Fprintf(&src, "  - {id: s%d, activity: p.echo, with: {i: %d}}\n", i, i)
		}
		f := filepath.Join(t.TempDir(), "seq.wend.yaml")
		return testing.AllocsPerRun(5, func() {
			n++
			id := fmt.Sprintf("seq%d", n)
			if _, _, err := e.Start(context.Background(), StartRequest{WorkflowID: id, SpecFile: f, Source: src.String(), Input: json.RawMessage("null")}); err != nil {
				t.Fatal(err)
			}
			if rec, err := e.WaitClosed(context.Background(), id); err != nil || rec.Status != history.StatusCompleted {
				t.Fatalf("%s: %v %v", id, rec.Status, err)
			}
		})
	}
	short, long := perRun(10), perRun(110)
	perStep := (long - short) / 100
	if perStep > 48 {
		t.Fatalf("a sequential step: %.1f allocations, over 48", perStep)
	}
}
