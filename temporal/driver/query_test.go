package driver

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/testsuite"
)

func page(t *testing.T, e *testsuite.TestWorkflowEnvironment, q wire.EventsQuery) wire.EventsPage {
	t.Helper()
	v, err := e.QueryWorkflow(wire.QueryEvents, q)
	if err != nil {
		t.Fatal(err)
	}
	var p wire.EventsPage
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEventsQueryPaged: the wend history of a closed run is read in pages of at most
// MaxBytes (at least one event each), that join into the whole history.
func TestEventsQueryPaged(t *testing.T) {
	src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    steps:\n      - activity: p.echo\n        with: \"${{ item }}\"\n"
	e, _ := newEnv(t)
	e.ExecuteWorkflow(wire.WorkflowType, startInput(src, map[string]any{"items": make([]int, 20)}, nil))
	all := page(t, e, wire.EventsQuery{})
	if all.More || all.Total != uint64(len(all.Events)) || all.Total < 40 {
		t.Fatalf("default page: %d events, more %v, total %d", len(all.Events), all.More, all.Total)
	}
	checkHistory(t, all.Events)
	for _, max := range []int{1, 300, 2000} {
		var joined []history.Event
		for {
			p := page(t, e, wire.EventsQuery{After: uint64(len(joined)), MaxBytes: max})
			size := 0
			for _, ev := range p.Events {
				b, _ := json.Marshal(ev)
				size += len(b)
			}
			if len(p.Events) == 0 || (len(p.Events) > 1 && size > max) {
				t.Fatalf("max %d: page of %d events, %d bytes", max, len(p.Events), size)
			}
			joined = append(joined, p.Events...)
			if !p.More {
				break
			}
		}
		if !slices.EqualFunc(joined, all.Events, func(a, b history.Event) bool { return a.Seq == b.Seq && a.Type == b.Type }) {
			t.Fatalf("max %d: pages join into %d events, want %d", max, len(joined), len(all.Events))
		}
	}
	if p := page(t, e, wire.EventsQuery{After: all.Total + 5}); len(p.Events) != 0 || p.More || p.Total != all.Total {
		t.Fatalf("after the end: %+v", p)
	}
	// A huge request is cut to a page Temporal can carry.
	setVar(t, &MaxPageBytes, 2000)
	big := page(t, e, wire.EventsQuery{MaxBytes: 1 << 30})
	if !big.More || len(big.Events) >= len(all.Events) {
		t.Fatalf("a 1 GiB page request returned %d of %d events, more %v", len(big.Events), len(all.Events), big.More)
	}
}
