package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// startChild runs a run_workflow step as a child workflow of the same type. Its spec text is
// the one the parent started with (StartInput.Specs); a child that cannot start fails the step.
func (d *driver) startChild(step string, cs history.ChildSchedule) {
	d.awaiting = append(d.awaiting, step)
	in, f := d.childInput(step, cs)
	if f != nil {
		d.queue = append(d.queue, history.Event{Type: history.ChildWorkflowFailed, Step: step,
			Data: history.MustData(history.Closed{Failure: f})})
		return
	}
	cctx := workflow.WithChildOptions(d.withCancel(childKey(step)), workflow.ChildWorkflowOptions{
		WorkflowID:          cs.WorkflowID,
		Memo:                map[string]any{wire.MemoName: d.childName(cs), wire.MemoSpecFile: cs.SpecFile, wire.MemoSpecSHA256: in.Started.SpecSHA256},
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_TERMINATE,
		WaitForCancellation: true, // a cancelled child compensates before its parent closes
	})
	fut := workflow.ExecuteChildWorkflow(cctx, wire.WorkflowType, in)
	d.children[step] = fut
	workflow.Go(d.ctx, func(gctx workflow.Context) {
		defer delete(d.children, step)
		var we workflow.Execution
		if err := fut.GetChildWorkflowExecution().Get(gctx, &we); err != nil {
			d.send(gctx, history.Event{Type: history.ChildWorkflowFailed, Step: step,
				Data: history.MustData(history.Closed{Failure: startFailure(err)})})
			return
		}
		var out json.RawMessage
		err := fut.Get(gctx, &out)
		d.send(gctx, childOutcome(step, we.RunID, out, err))
	})
}

// childName is the workflow name of the child a schedule starts, for its memo.
func (d *driver) childName(cs history.ChildSchedule) string {
	if cs.Shard != nil {
		return d.w.Name
	}
	return d.specs[cs.SpecFile].Name
}

func (d *driver) childInput(step string, cs history.ChildSchedule) (wire.StartInput, *history.Failure) {
	if cs.Shard != nil {
		return d.shardInput(step, cs)
	}
	src, ok := d.in.Specs[cs.SpecFile]
	if !ok {
		return wire.StartInput{}, startFailure(fmt.Errorf(
			"the text of %s is not in the run's start input: start the run with a client that bundles every run_workflow file", cs.SpecFile))
	}
	w := d.specs[cs.SpecFile]
	if w == nil {
		var ds spec.Diagnostics
		w, ds = (&spec.Loader{SkipChildren: true}).Load(cs.SpecFile, []byte(src))
		if w == nil || ds.HasErrors() {
			return wire.StartInput{}, startFailure(fmt.Errorf("child workflow %s is invalid:\n%s", cs.SpecFile, ds.Error()))
		}
		d.specs[cs.SpecFile] = w
	}
	input, err := checkInput(w, cs.Input)
	if err != nil {
		return wire.StartInput{}, startFailure(fmt.Errorf("child workflow %s: %v", cs.SpecFile, err))
	}
	sum := sha256.Sum256([]byte(src))
	in := wire.StartInput{Specs: d.in.Specs, SearchAttributes: d.in.SearchAttributes, Started: history.Started{WorkflowID: cs.WorkflowID, Input: input,
		SpecFile: cs.SpecFile, SpecSource: src, SpecSHA256: hex.EncodeToString(sum[:]), ParentRunID: d.st.RunID, ParentStep: step, Rules: history.RulesCurrent}}
	in.Started.TraceParent = childTrace(d.st, step, d.opts.Spans != nil)
	if n := encodedSize(in); n > MaxPayloadBytes {
		return wire.StartInput{}, payloadFailure("child workflow start input "+cs.WorkflowID, n)
	}
	return in, nil
}

// shardInput starts a shard child of a sharded for_each: a run of this run's own spec text
// over its slice (the interpreter's ShardInput, which no input schema applies to).
func (d *driver) shardInput(step string, cs history.ChildSchedule) (wire.StartInput, *history.Failure) {
	in := wire.StartInput{Specs: d.in.Specs, Started: history.Started{WorkflowID: cs.WorkflowID, Input: cs.Input,
		SpecFile: d.st.SpecFile, SpecSource: d.st.SpecSource, SpecSHA256: d.st.SpecSHA256, ParentRunID: d.st.RunID,
		ParentStep: step, Rules: history.RulesCurrent, Shard: cs.Shard}}
	in.Started.TraceParent = childTrace(d.st, step, d.opts.Spans != nil)
	if n := encodedSize(in); n > MaxPayloadBytes {
		return wire.StartInput{}, payloadFailure("shard child start input "+cs.WorkflowID, n)
	}
	return in, nil
}

func startFailure(err error) *history.Failure {
	return &history.Failure{Category: history.CategoryChildWorkflow, PropagationKind: "child_workflow", Type: "ChildStartFailed",
		Message: err.Error(), NonRetryable: true}
}

// childOutcome phrases how a child ended as the parent's input. A child that did not
// complete returns the wend Closed payload of its terminal event as its error's detail.
func childOutcome(step, runID string, out json.RawMessage, err error) history.Event {
	ev := history.Event{Type: history.ChildWorkflowCompleted, Step: step}
	if err == nil {
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		ev.Data = history.MustData(history.Closed{Output: out, RunID: runID})
		return ev
	}
	ev.Type = history.ChildWorkflowFailed
	ev.Data = history.MustData(closedOf(runID, err))
	return ev
}

// closedOf reads a workflow's failure: the wend Closed payload it failed with, or one made up
// from Temporal's own ending (cancelled, terminated, timed out).
func closedOf(runID string, err error) history.Closed {
	c := history.Closed{RunID: runID}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.HasDetails() && ae.Details(&c) == nil && c.Failure != nil {
		c.RunID = runID
		return c
	}
	f := &history.Failure{Category: history.CategoryChildWorkflow, Message: err.Error()}
	var (
		ce *temporal.CanceledError
		te *temporal.TerminatedError
		to *temporal.TimeoutError
	)
	switch {
	case errors.As(err, &ce):
		f = &history.Failure{Category: history.CategoryCancelled, Type: "Cancelled", Message: "run cancelled"}
	case errors.As(err, &te):
		f = &history.Failure{Category: history.CategoryTerminated, Type: "Terminated", Message: "run terminated"}
	case errors.As(err, &to):
		f = &history.Failure{Category: history.CategoryTimeout, Type: "Timeout", Message: "run timed out"}
	}
	c.Failure = f
	return c
}

// awaitCancelledChildren waits for the children cancelled with the run to finish cancelling
// (their compensation and on_cancel), so none is cut short by the parent's close.
func (d *driver) awaitCancelledChildren() {
	for _, f := range d.cancelled {
		_ = f.Get(d.ctx, nil) // how a cancelled child ended is its own history's business
	}
}

// startWait runs a wait_for_workflow step as the wire.ActivityAwait activity, which blocks
// (heartbeating) until the awaited run closes. Waiting is idempotent, so Temporal may retry it.
func (d *driver) startWait(step string, ws history.WaitSchedule) {
	d.awaiting = append(d.awaiting, step)
	if d.acts >= MaxPendingActivities {
		d.queue = append(d.queue, history.Event{Type: history.WorkflowWaitFailed, Step: step,
			Data: history.MustData(history.Closed{Failure: pendingFailure(d.acts)})})
		return
	}
	wctx := workflow.WithActivityOptions(d.withCancel(waitKey(step)), workflow.ActivityOptions{
		ActivityID: "wait/" + step, StartToCloseTimeout: DefaultStartToClose, HeartbeatTimeout: wire.DefaultHeartbeatTimeout})
	fut := workflow.ExecuteActivity(wctx, wire.ActivityAwait, wire.AwaitInput{WorkflowID: ws.WorkflowID})
	d.acts++
	workflow.Go(d.ctx, func(gctx workflow.Context) {
		var res wire.AwaitResult
		err := fut.Get(gctx, &res)
		d.acts--
		if wctx.Err() != nil {
			return // the step stopped waiting
		}
		delete(d.cancels, waitKey(step))
		d.send(gctx, waitOutcome(step, ws.WorkflowID, res, err))
	})
}

func waitOutcome(step, id string, res wire.AwaitResult, err error) history.Event {
	if err != nil {
		return history.Event{Type: history.WorkflowWaitFailed, Step: step, Data: history.MustData(history.Closed{Failure: &history.Failure{
			Category: history.CategoryChildWorkflow, Type: "WaitFailed", Message: fmt.Sprintf("waiting for workflow %s: %v", id, err)}})}
	}
	c := res.Closed
	c.RunID = res.RunID
	if res.Status == history.StatusCompleted {
		if len(c.Output) == 0 {
			c.Output = json.RawMessage("null")
		}
		return history.Event{Type: history.WorkflowWaitCompleted, Step: step, Data: history.MustData(c)}
	}
	if c.Failure == nil {
		c.Failure = &history.Failure{Category: history.CategoryCancelled, Message: "run " + res.Status}
	}
	return history.Event{Type: history.WorkflowWaitFailed, Step: step, Data: history.MustData(c)}
}
