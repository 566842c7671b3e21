package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

const ratedSpec = `wend: v1
name: rated
plugins:
  p: {command: [./plug], env: [WEND_TESTPLUGIN_START_MS=2000]}
limits: {p.now: {rate: 5/s}}
steps:
  - id: stamp
    activity: p.now
output: "${{ steps.stamp.output }}"
`

// A rate holds at a plugin that has just started: ten runs call a plugin that takes two
// seconds to start, under rate 5/s, and the times the plugin itself read at each call are
// never six within a second. (The engine counts a try when its call goes out; the plugin
// reads its clock when the call arrives, so each gap is allowed the delivery's jitter,
// 300 ms, far below the gap of none that tries admitted during the start would show.)
func TestRateHoldsAtAPluginJustStarted(t *testing.T) {
	bin := buildTestPlugin(t, "v1")
	dir := t.TempDir()
	deploy(t, bin, filepath.Join(dir, "plug"))
	file := filepath.Join(dir, "rated.wend.yaml")
	if err := os.WriteFile(file, []byte(ratedSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	a := apptest.Open(t, apptest.Options{Dir: dir, PluginStartTimeout: time.Minute})
	eng, srv := a.Engine, a.Server(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 10 {
		if _, _, err := eng.Start(ctx, engine.StartRequest{WorkflowID: fmt.Sprint("r", i), SpecFile: file, Source: ratedSpec}); err != nil {
			t.Fatal(err)
		}
	}
	var at []time.Time
	for i := range 10 {
		r, err := eng.WaitClosed(ctx, fmt.Sprint("r", i))
		if err != nil || r.Status != history.StatusCompleted {
			t.Fatalf("r%d: %+v, %v", i, r, err)
		}
		doc, err := srv.Export(r.WorkflowID)
		if err != nil {
			t.Fatal(err)
		}
		var ns int64
		if err := json.Unmarshal(doc.Workflow.Output, &ns); err != nil {
			t.Fatalf("r%d output %s: %v", i, doc.Workflow.Output, err)
		}
		at = append(at, time.Unix(0, ns))
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	for i := 5; i < len(at); i++ {
		if d := at[i].Sub(at[i-5]); d < time.Second-300*time.Millisecond {
			t.Errorf("calls %d and %d reached the plugin %s apart: six calls within a second under rate 5/s", i-5, i, d)
		}
	}
	t.Logf("the plugin saw the calls at +%v", offsets(at))
}

func offsets(at []time.Time) []time.Duration {
	out := make([]time.Duration, len(at))
	for i, a := range at {
		out[i] = a.Sub(at[0]).Round(time.Millisecond)
	}
	return out
}
