package spec

import "fmt"

// MaxRunEvents is how many events one run's history may hold; the interpreter fails a run
// that reaches it (interpreter.MaxEvents is this value).
const MaxRunEvents = 51_200

// shardChildOverhead is what a shard child records besides its items: WorkflowStarted and
// its closing event.
const shardChildOverhead = 2

// shard checks a for_each with `shard`: its child runs must fit in a history, and its body
// must need nothing a child run does not have. A shard child runs the body over its slice of
// the items with the parent's input and the state as it was when the for_each started; it
// has no steps outside the body, no state of the parent to change, and no signals (they go
// to the parent run).
func (c *checker) shard(s *Step) {
	if s.Shard <= 0 {
		return
	}
	if per := MinEvents(s.Steps); per > 0 && s.Shard*per+shardChildOverhead > MaxRunEvents {
		c.errorf(s.Pos, s.Path+".shard", "shard of %d items needs at least %d history events in each child run (%d an item), over a run's limit of %d; use shard: %d or less",
			s.Shard, s.Shard*per+shardChildOverhead, per, MaxRunEvents, (MaxRunEvents-shardChildOverhead)/per)
	}
	inside := map[string]bool{}
	walkSteps(s.Steps, func(b *Step) {
		if b.ID != "" {
			inside[b.ID] = true
		}
	})
	walkSteps(s.Steps, func(b *Step) {
		c.shardBodyStep(s, b, inside)
		for _, e := range stepExprs(b) {
			s.ShardReadsInput = s.ShardReadsInput || e.ReadsInput
			s.ShardReadsState = s.ShardReadsState || e.ReadsState
		}
	})
}

// shardBodyStep refuses what step b of sharded for_each s cannot do in a child run.
func (c *checker) shardBodyStep(s, b *Step, inside map[string]bool) {
	where := fmt.Sprintf("in the body of a for_each with shard (%s)", s.Path)
	switch {
	case len(b.Set) > 0:
		c.errorf(b.Pos, b.Path+".set", "set cannot be used %s: each shard runs as a child run whose state is not the parent's; "+
			"return the value as the step's output instead (the for_each's output lists every item's)", where)
	case len(b.CompensateWith) > 0:
		c.errorf(b.Pos, b.Path+".compensate_with", "compensate_with cannot be used %s: the parent run could not compensate the items its child runs completed; "+
			"use a for_each without shard, or compensate inside the item with catch", where)
	case b.Kind == KindWaitForSignal:
		c.errorf(b.Pos, b.Path+".wait_for_signal", "wait_for_signal cannot be used %s: signals go to the parent run, not its child runs; "+
			"wait for the signal before the for_each, or use a for_each without shard", where)
	case b.Kind == KindContinueAsNew:
		c.errorf(b.Pos, b.Path+".continue_as_new", "continue_as_new cannot be used %s: it would restart a child run, not the workflow", where)
	}
	for _, e := range stepExprs(b) {
		for _, id := range e.Steps {
			if !inside[id] {
				c.errorf(e.Pos, b.Path, "steps.%s cannot be read %s: the body runs in child runs that see only its own steps; "+
					"before the for_each, `set` what it needs into state (the body reads state as it was when the for_each started)", id, where)
			}
		}
	}
}

// stepExprs lists the expressions of one step (not of the steps under it).
func stepExprs(s *Step) []*Expr {
	var out []*Expr
	if s.If != nil {
		out = append(out, s.If)
	}
	out = append(out, s.With.exprs()...)
	for _, f := range s.Set {
		out = append(out, f.Value.exprs()...)
	}
	out = append(out, s.ForEach.exprs()...)
	out = append(out, s.DelayUntil.exprs()...)
	out = append(out, s.WaitForWorkflow.exprs()...)
	if s.Fail != nil {
		out = append(out, s.Fail.Message.exprs()...)
	}
	return out
}

// MinEvents is the fewest events a sequence of steps records when it completes.
func MinEvents(steps []*Step) int {
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
func minEvents(s *Step) int {
	if s.If != nil {
		return 0
	}
	n := 0
	switch s.Kind {
	case KindActivity, KindDelay, KindRunWorkflow, KindWaitForWorkflow:
		n = 2
	case KindWaitForSignal:
		n = 1
	case KindSteps:
		n = MinEvents(s.Steps)
	case KindParallel:
		n = MinEvents(s.Parallel)
	}
	if len(s.Catch) > 0 {
		n = min(n, MinEvents(s.Catch))
	}
	return n
}
