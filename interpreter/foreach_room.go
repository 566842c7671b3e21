package interpreter

import (
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// forEachRoom explains why a for_each of n items cannot complete within MaxEvents, or "".
// Each item needs at least minEvents(body) events; the history already holds r.count, plus
// the input being applied and the decisions made for it so far. The run fails on the input
// that finds the history at MaxEvents, so the for_each can end only if every one of its
// events fits below that. The bound is a minimum (retries, timeouts and failures only add
// events), so a for_each that fails here could not have completed.
func (r *Run) forEachRoom(s *spec.Step, n int) string {
	if r.info.Rules < history.RulesForEachRoom {
		return "" // recorded before the check: replays as it ran
	}
	per := minEventsSeq(s.Steps)
	if per == 0 {
		return ""
	}
	have := r.count + 1 + len(r.out)
	need := n * per
	if have+need <= MaxEvents {
		return ""
	}
	return fmt.Sprintf("for_each over %d items needs at least %d history events (%d an item), and the run's history "+
		"has room for %d of its %d; use smaller batches, or a run_workflow child per batch, or continue_as_new",
		n, need, per, max(MaxEvents-have, 0), MaxEvents)
}

// minEventsSeq is the fewest events a sequence of steps records when it completes.
func minEventsSeq(steps []*spec.Step) int {
	total := 0
	for _, s := range steps {
		total += minEvents(s)
	}
	return total
}

// minEvents is the fewest events one step records on its way to completing: an activity its
// schedule and an outcome, a delay its timer set and fired, a signal wait the signal applied
// (the signal may have been received before), a child or workflow wait its schedule and
// outcome. A step with `if` may be skipped, a nested for_each may be empty, and a step with
// `catch` may end through its catch steps: those count what their cheapest path records.
func minEvents(s *spec.Step) int {
	if s.If != nil {
		return 0
	}
	n := 0
	switch s.Kind {
	case spec.KindActivity, spec.KindDelay, spec.KindRunWorkflow, spec.KindWaitForWorkflow:
		n = 2
	case spec.KindWaitForSignal:
		n = 1
	case spec.KindSteps:
		n = minEventsSeq(s.Steps)
	case spec.KindParallel:
		n = minEventsSeq(s.Parallel)
	}
	if len(s.Catch) > 0 {
		n = min(n, minEventsSeq(s.Catch))
	}
	return n
}
