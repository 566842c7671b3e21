package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/wendflow/wend/testkit/cputime"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// BenchmarkSequentialStep prices the engine's own share of a sequential step: a 200-step
// workflow of in-process echo calls over the in-memory store, so neither a sync nor a plugin
// is in the figure (nor Start, which loads the spec); what is left is delivering the outcome, applying it, committing (in
// memory), the effects and dispatching the next try. Reported per step.
func BenchmarkSequentialStep(b *testing.B) {
	const steps = 200
	var src strings.Builder
	src.WriteString(head + "steps:\n")
	for i := range steps {
		fmt.Fprintf(&src, "  - {id: s%d, activity: p.echo, with: {i: %d}}\n", i, i)
	}
	f := filepath.Join(b.TempDir(), "seq.wend.yaml")
	e := New(Options{Store: history.NewMemStore(), Activities: &fakeActs{}, MaxActivities: 512})
	defer e.Close()
	var took time.Duration
	cpu := cputime.Process()
	for i := range b.N {
		id := fmt.Sprintf("seq%d", i)
		if _, _, err := e.Start(context.Background(), StartRequest{WorkflowID: id, SpecFile: f, Source: src.String(), Input: json.RawMessage("null")}); err != nil {
			b.Fatal(err)
		}
		started := time.Now() // the run's steps, not loading its spec
		rec, err := e.WaitClosed(context.Background(), id)
		took += time.Since(started)
		if err != nil || rec.Status != history.StatusCompleted {
			b.Fatalf("%s: %v %v", id, rec.Status, err)
		}
	}
	b.ReportMetric(float64(took)/float64(time.Microsecond)/float64(b.N*steps), "µs/step")
	// The process's CPU (all its goroutines and GC, and each run's start), which a loaded
	// machine moves less than the wall time.
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(time.Microsecond)/float64(b.N*steps), "cpu-µs/step")
}
