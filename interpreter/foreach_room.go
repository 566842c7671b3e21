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
	have := r.count + 1 + len(r.out)
	if s.Shard > 0 {
		// The items run in child runs; this run records a schedule and an outcome a child.
		children := (n + s.Shard - 1) / s.Shard
		if have+2*children <= MaxEvents {
			return ""
		}
		return fmt.Sprintf("for_each over %d items in %d shards of %d needs at least %d history events (2 a shard child), and the run's history "+
			"has room for %d of its %d; use a larger shard", n, children, s.Shard, 2*children, max(MaxEvents-have, 0), MaxEvents)
	}
	per := spec.MinEvents(s.Steps)
	if per == 0 {
		return ""
	}
	need := n * per
	if have+need <= MaxEvents {
		return ""
	}
	hint := "give it shard: N to run its items in child runs of N, or continue_as_new"
	if r.info.Rules < history.RulesShardHint {
		hint = "use smaller batches, or a run_workflow child per batch, or continue_as_new"
	}
	return fmt.Sprintf("for_each over %d items needs at least %d history events (%d an item), and the run's history "+
		"has room for %d of its %d; %s", n, need, per, max(MaxEvents-have, 0), MaxEvents, hint)
}
