package interpreter

import (
	"fmt"
	"slices"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

func (n *node) startDelay() {
	fireAt := n.r.now.Add(n.s.Delay.D)
	if n.s.DelayUntil != nil {
		v, err := n.s.DelayUntil.Eval(n.env(n.s.DelayUntil.StepRefs(), nil))
		if err != nil {
			n.stepFailed(exprFailure(n, "delay.until", err))
			return
		}
		s, _ := v.(string)
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			n.stepFailed(exprFailure(n, "delay.until", fmt.Errorf("expected an RFC 3339 timestamp like 2026-01-02T15:04:05Z, got %v", v)))
			return
		}
		fireAt = t
	}
	n.timerID = n.path
	n.schedule(n.timerID, fireAt, "delay")
}

func (n *node) schedule(id string, at time.Time, purpose string) {
	n.scheduleFor(id, history.TimerSchedule{TimerID: id, FireAt: at.UTC(), Purpose: purpose})
}

func (n *node) scheduleFor(id string, ts history.TimerSchedule) {
	if msg := n.r.overPending(n.r.timers.len(), "timers"); msg != "" {
		n.stepFailed(limitFailure(msg))
		return
	}
	n.r.timers.set(id, stepTimer{n: n, at: ts.FireAt})
	n.r.emit(history.Event{Type: history.TimerScheduled, Step: n.path, Data: history.MustData(ts)})
}

// scheduleTimeout starts the step's `timeout` timer for waits.
func (n *node) scheduleTimeout() {
	if n.s.Timeout.D > 0 {
		n.timeoutID = n.path + "#timeout"
		ts := history.TimerSchedule{TimerID: n.timeoutID, FireAt: n.r.now.Add(n.s.Timeout.D).UTC(), Purpose: "timeout"}
		if n.s.Kind == spec.KindWaitForSignal && n.r.info.Rules >= history.RulesSignalWaitTimes {
			ts.Signal = n.s.Signal
		}
		n.scheduleFor(n.timeoutID, ts)
	}
}

func (r *Run) timerFired(ev history.Event) error {
	ref, err := history.DataOf[history.TimerRef](ev)
	if err != nil {
		return err
	}
	if t, ok := r.wfTimers[ref.TimerID]; ok {
		delete(r.wfTimers, ref.TimerID)
		r.timeOut(t.kind)
		return nil
	}
	n := r.timers.at(ref.TimerID).n
	if n == nil || n.state != running {
		return nil // cancelled before it fired
	}
	if ev.Step != "" && ev.Step != n.path {
		// Older histories name no step; one that names another step is a confused delivery.
		return fmt.Errorf("TimerFired for timer %s names step %s, but the timer belongs to step %s", ref.TimerID, ev.Step, n.path)
	}
	r.timers.del(ref.TimerID)
	if ref.TimerID == n.timeoutID {
		if n.waiting != "" {
			r.removeWaiter(n)
		}
		r.children.del(n.path)
		n.stepFailed(&history.Failure{Category: history.CategoryTimeout, PropagationKind: "timeout", Type: "Timeout",
			Message: fmt.Sprintf("%s step timed out after %s", n.s.Kind, n.s.Timeout.D)})
		return nil
	}
	n.complete(nil)
	return nil
}

func (n *node) startSignalWait() {
	n.waiting, n.waitSince = n.s.Signal, n.r.now
	n.r.waiters.set(n.waiting, append(n.r.waiters.at(n.waiting), n))
	n.scheduleTimeout()
	n.r.matchSignals(n.waiting)
}

func (r *Run) removeWaiter(n *node) {
	r.setWaiters(n.waiting, slices.DeleteFunc(r.waiters.at(n.waiting), func(x *node) bool { return x == n }))
	n.waiting = ""
}

// setWaiters sets the steps waiting for a signal's name, dropping the name when none wait.
func (r *Run) setWaiters(name string, l []*node) {
	if len(l) == 0 {
		r.waiters.del(name)
		return
	}
	r.waiters.set(name, l)
}

func (r *Run) signalReceived(ev history.Event) error {
	s, err := history.DataOf[history.Signal](ev)
	if err != nil {
		return err
	}
	s.ReceivedSeq = ev.Seq
	if s.SignalID != "" {
		put(&r.signalIDs, s.SignalID, true)
	}
	put(&r.signals, s.Name, append(r.signals[s.Name], s))
	r.matchSignals(s.Name)
	if n := r.unconsumedSignals(); n > MaxSignals {
		r.overLimit(fmt.Sprintf("the run has %d signals nobody consumed, over the limit of %d", n, MaxSignals))
	}
	return nil
}

func (r *Run) unconsumedSignals() int {
	n := 0
	for _, l := range r.signals {
		n += len(l)
	}
	return n
}

// matchSignals hands received signals to waiting steps, oldest to oldest.
func (r *Run) matchSignals(name string) {
	for len(r.waiters.at(name)) > 0 && len(r.signals[name]) > 0 {
		ws := r.waiters.at(name)
		w := ws[0]
		sig := r.signals[name][0]
		r.setWaiters(name, ws[1:])
		r.signals[name] = r.signals[name][1:]
		w.waiting = ""
		applied := history.Signal{Name: name, ReceivedSeq: sig.ReceivedSeq}
		if r.info.Rules >= history.RulesSignalWaitTimes {
			applied.WaitedSince = w.waitSince.UTC()
		}
		r.emit(history.Event{Type: history.SignalApplied, Step: w.path, Data: history.MustData(applied)})
		data, err := decodeJSON(sig.Data)
		if err != nil {
			w.stepFailed(&history.Failure{Category: history.CategoryInternal, Message: "signal data: " + err.Error()})
			continue
		}
		w.complete(data)
	}
}

// SeenSignal reports whether a signal with this client id was received already: a resend
// after a lost acknowledgement must not be applied twice.
func (r *Run) SeenSignal(id string) bool { return id != "" && r.signalIDs[id] }

func (n *node) startChild() {
	input, ok := n.with(nil)
	if !ok {
		return
	}
	if msg := n.r.overPending(n.r.children.len(), "child workflows"); msg != "" {
		n.stepFailed(limitFailure(msg))
		return
	}
	n.r.children.set(n.path, n)
	n.childID = n.r.childWorkflowID(n.path)
	n.waitData = history.MustData(history.ChildSchedule{WorkflowID: n.childID,
		SpecFile: spec.ChildPath(n.r.info.SpecFile, n.s.RunWorkflow), Input: mustJSON(input)})
	n.r.emit(history.Event{Type: history.ChildWorkflowScheduled, Step: n.path, Data: n.waitData})
	n.scheduleTimeout()
}

// childWorkflowID names the child a run_workflow step at path starts. It derives from the
// run, as activity execution ids do, so each continue_as_new iteration starts its own child
// while a replay, a crash or a `wend retry` of the same run finds the one it started.
func (r *Run) childWorkflowID(path string) string {
	if r.info.Rules < history.RulesChildIDsByRun {
		return r.info.WorkflowID + "/" + path
	}
	return r.info.WorkflowID + "/" + r.execBase() + "/" + path
}

func (n *node) startWorkflowWait() {
	v, err := n.s.WaitForWorkflow.Eval(n.env(n.s.WaitForWorkflow.StepRefs(), nil))
	if err != nil {
		n.stepFailed(exprFailure(n, "wait_for_workflow", err))
		return
	}
	id, ok := v.(string)
	if !ok || id == "" {
		n.stepFailed(exprFailure(n, "wait_for_workflow", fmt.Errorf("expected a workflow id, got %v", v)))
		return
	}
	n.r.children.set(n.path, n)
	n.waitData = history.MustData(history.WaitSchedule{WorkflowID: id})
	n.r.emit(history.Event{Type: history.WorkflowWaitScheduled, Step: n.path, Data: n.waitData})
	n.scheduleTimeout()
}

func (r *Run) childClosed(ev history.Event) error {
	n := r.children.at(ev.Step)
	if n == nil || n.state != running {
		return nil
	}
	c, err := history.DataOf[history.Closed](ev)
	if err != nil {
		return err
	}
	r.children.del(ev.Step)
	if c.Failure != nil {
		f := *c.Failure
		f.Category, f.PropagationKind, f.Step = history.CategoryChildWorkflow, "child_workflow", n.path
		f.Message = fmt.Sprintf("workflow run %s failed: %s", c.RunID, c.Failure.Message)
		n.fail(&f)
		return nil
	}
	out, err := decodeJSON(c.Output)
	if err != nil {
		return fmt.Errorf("apply %s %d: output: %w", ev.Type, ev.Seq, err)
	}
	n.complete(out)
	return nil
}

func (n *node) continueAsNew() {
	input, ok := n.with(n.r.inputValue())
	if !ok {
		return
	}
	n.state = finished
	n.r.root.cancel()
	n.r.close(history.WorkflowContinuedAsNew, history.Closed{Input: mustJSON(input)})
}

func (n *node) failStep() {
	f := &history.Failure{Category: history.CategoryActivity, PropagationKind: "fail_step", Type: n.s.Fail.Type,
		NonRetryable: n.s.Fail.NonRetryable}
	if n.s.Fail.Message != nil {
		v, err := n.s.Fail.Message.Eval(n.env(n.s.Fail.Message.StepRefs(), nil))
		if err != nil {
			n.stepFailed(exprFailure(n, "fail.message", err))
			return
		}
		f.Message = fmt.Sprint(v)
	}
	n.stepFailed(f)
}

func (r *Run) cancelRequested(ev history.Event) error {
	c, err := history.DataOf[history.CancelRequest](ev)
	if err != nil {
		return err
	}
	if r.unwinding != nil {
		return nil // already compensating: a second cancel changes nothing
	}
	for _, n := range r.inFlightUndoables() {
		n.remember(true)
	}
	if r.root != nil {
		r.root.cancel()
	}
	f := &history.Failure{Category: history.CategoryCancelled, PropagationKind: "cancelled", Type: "Cancelled",
		Message: "cancelled: " + c.Reason}
	if len(r.undo) > 0 || len(r.onCancelSteps()) > 0 {
		r.unwind("cancel", f)
		return nil
	}
	r.close(history.WorkflowCancelled, history.Closed{Failure: f})
	return nil
}
