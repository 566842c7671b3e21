package interpreter

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// A for_each with `shard: N` runs its items as child runs of N items each, one at a time, so
// its items need not fit in this run's history: the parent records two events a child
// (ChildWorkflowScheduled with the slice, and its outcome). A shard child is a run of the same
// spec text whose Started names the for_each (history.ShardRef): its root is the for_each's
// body over its slice, and its output is the slice's outputs.

// shardChild is what a shard child run knows of its slice.
type shardChild struct {
	body   *spec.Step // the for_each step without shard, catch, set, id or if
	items  []any
	offset int
}

// startShards runs the items of a sharded for_each in child runs.
func (n *node) startShards(items []any) {
	n.items = items
	n.outs = make([]any, len(items))
	n.pending = (len(items) + n.s.Shard - 1) / n.s.Shard
	if n.pending == 0 {
		n.complete(n.outs)
		return
	}
	vars := map[string]any{}
	var chain []*scope
	for s := n.sc; s != nil; s = s.parent {
		chain = append(chain, s)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].vars {
			vars[k] = v
		}
	}
	// Each child carries only what its body reads: the items often come from the input, and
	// a copy of the input in every child would double what the parent's history holds.
	n.shardIn = history.ShardInput{Vars: vars}
	if n.s.ShardReadsInput {
		n.shardIn.Input = n.r.inputValue()
	}
	if n.s.ShardReadsState {
		n.shardIn.State = publicState(n.r.state)
	}
	n.startShard()
}

// startShard starts the child run of the next slice.
func (n *node) startShard() {
	k := n.next
	n.next++
	off := k * n.s.Shard
	end := min(off+n.s.Shard, len(n.items))
	if msg := n.r.overPending(n.r.children.len(), "child workflows"); msg != "" {
		n.stepFailed(limitFailure(msg))
		return
	}
	in := n.shardIn
	in.Items = n.items[off:end]
	input, err := json.Marshal(in)
	if err != nil {
		n.stepFailed(&history.Failure{Category: history.CategoryExpression, PropagationKind: "step", Type: "ExpressionError",
			Message: fmt.Sprintf("for_each shard %d: encode its input: %v", k, err), NonRetryable: true, Step: n.path})
		return
	}
	if len(input) > MaxPayloadBytes {
		n.stepFailed(limitFailure(fmt.Sprintf("for_each shard %d's input (its %d items with the run's input and state) is %d bytes, over the %d-byte limit of a payload; use a smaller shard",
			k, end-off, len(input), MaxPayloadBytes)))
		return
	}
	sub := &node{r: n.r, s: shardStep, path: n.path + "#shard" + strconv.Itoa(k), sc: n.sc}
	sub.done = func(out any, f *history.Failure) {
		if n.state != running {
			return
		}
		if f != nil {
			n.fail(f)
			return
		}
		list, ok := out.([]any)
		if !ok || len(list) != end-off {
			n.stepFailed(&history.Failure{Category: history.CategoryInternal, PropagationKind: "step", Step: n.path,
				Message: fmt.Sprintf("shard child %s returned %s, want a list of its %d items' outputs", sub.childID, describe(out), end-off)})
			return
		}
		copy(n.outs[off:end], list)
		n.pending--
		if n.pending == 0 {
			n.complete(n.outs)
			return
		}
		n.startShard()
	}
	n.kids = []*node{sub} // one child at a time: cancelling the step cancels the open one
	n.r.children.set(sub.path, sub)
	sub.childID = n.r.childWorkflowID(sub.path)
	sub.waitData = history.MustData(history.ChildSchedule{WorkflowID: sub.childID, SpecFile: n.r.info.SpecFile,
		Input: input, Shard: &history.ShardRef{Path: n.s.Path, Offset: off}})
	n.r.emit(history.Event{Type: history.ChildWorkflowScheduled, Step: sub.path, Data: sub.waitData})
}

// shardStep is the step a shard child's node in the parent stands for: a child run with no
// set, id, catch or compensation of its own (the for_each's are applied by the for_each).
var shardStep = &spec.Step{Kind: spec.KindRunWorkflow}

// startShardChild makes the root of a shard child: the for_each named by ref, over the
// slice in the run's input.
func (r *Run) startShardChild(ref *history.ShardRef, raw json.RawMessage) error {
	s := r.w.StepAt(ref.Path)
	if s == nil || s.Kind != spec.KindForEach || s.Shard == 0 {
		return fmt.Errorf("apply WorkflowStarted: shard child of %s, which is not a for_each with shard in the workflow", ref.Path)
	}
	var in history.ShardInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("apply WorkflowStarted: shard input: %w", err)
	}
	body := *s
	body.Shard, body.If, body.ID, body.Set, body.Catch, body.CompensateWith = 0, nil, "", nil, nil, nil
	r.shard = &shardChild{body: &body, items: in.Items, offset: ref.Offset}
	r.input, r.inputDecoded = in.Input, true
	if in.State != nil {
		r.state = in.State
	}
	r.root = &seq{r: r, steps: []*spec.Step{&body}, sc: &scope{vars: in.Vars, steps: &table[any]{}}, done: r.finishShard}
	r.root.start()
	return nil
}

// finishShard closes a shard child with its items' outputs; it has no workflow output,
// compensation or on_cancel of its own (validation refuses compensate_with in the body).
func (r *Run) finishShard(out any, f *history.Failure) {
	if r.closed != "" {
		return
	}
	if f != nil {
		r.fail(f)
		return
	}
	r.close(history.WorkflowCompleted, history.Closed{Output: mustJSON(out)})
}

// shardItems hands a shard child's for_each its slice (once) and the global index of its
// first item; ok is false for any other for_each.
func (n *node) shardItems() (items []any, offset int, ok bool) {
	sh := n.r.shard
	if sh == nil || n.s != sh.body {
		return nil, 0, false
	}
	items, sh.items = sh.items, nil
	return items, sh.offset, true
}

// onCancelSteps are the steps to run after a cancel: none in a shard child (the parent runs
// its own on_cancel).
func (r *Run) onCancelSteps() []*spec.Step {
	if r.shard != nil {
		return nil
	}
	return r.w.OnCancel
}
