package export

import (
	"github.com/wendflow/wend/history"
)

// timer folds timer events. A timer id can be scheduled again after it closed (a step that
// runs again), so fired/cancelled apply to the id's latest scheduling, and only while open.
func (b *builder) timer(ev history.Event) error {
	if ev.Type == history.TimerScheduled {
		ts, err := history.DataOf[history.TimerSchedule](ev)
		if err != nil {
			return err
		}
		b.timers[ts.TimerID] = len(b.doc.Timers)
		b.doc.Timers = append(b.doc.Timers, Timer{TimerID: ts.TimerID, Step: ev.Step, Purpose: ts.Purpose,
			FireAt: ts.FireAt, Status: TimerScheduled, ScheduledSeq: ev.Seq, ScheduledAt: ev.Time})
		return nil
	}
	ref, err := history.DataOf[history.TimerRef](ev)
	if err != nil {
		return err
	}
	i, ok := b.timers[ref.TimerID]
	if !ok || b.doc.Timers[i].Status != TimerScheduled {
		return nil // a late firing of a cancelled timer: the interpreter ignores it too
	}
	t := &b.doc.Timers[i]
	t.Status, t.ClosedSeq, t.ClosedAt = TimerFired, ev.Seq, ev.Time
	if ev.Type == history.TimerCancelled {
		t.Status = TimerCancelled
	}
	return nil
}

// signal folds signal events: SignalApplied names the SignalReceived it consumed.
func (b *builder) signal(ev history.Event) error {
	s, err := history.DataOf[history.Signal](ev)
	if err != nil {
		return err
	}
	if ev.Type == history.SignalReceived {
		b.signals[ev.Seq] = len(b.doc.Signals)
		b.doc.Signals = append(b.doc.Signals, Signal{Name: s.Name, SignalID: s.SignalID, Data: s.Data,
			ReceivedSeq: ev.Seq, ReceivedAt: ev.Time, Pending: true})
		return nil
	}
	i, ok := b.signals[s.ReceivedSeq]
	if !ok {
		return nil
	}
	sig := &b.doc.Signals[i]
	sig.Pending, sig.AppliedSeq, sig.AppliedAt, sig.AppliedToStep = false, ev.Seq, ev.Time, ev.Step
	return nil
}

// child folds child-run and workflow-wait events; the closing events name the parent's step.
func (b *builder) child(ev history.Event) error {
	switch ev.Type {
	case history.ChildWorkflowScheduled:
		cs, err := history.DataOf[history.ChildSchedule](ev)
		if err != nil {
			return err
		}
		b.children[ev.Step] = len(b.doc.Children)
		b.doc.Children = append(b.doc.Children, Child{Kind: ChildRun, WorkflowID: cs.WorkflowID, Step: ev.Step,
			SpecFile: cs.SpecFile, Input: cs.Input, Status: ChildRunning, ScheduledSeq: ev.Seq, ScheduledAt: ev.Time})
		return nil
	case history.WorkflowWaitScheduled:
		ws, err := history.DataOf[history.WaitSchedule](ev)
		if err != nil {
			return err
		}
		b.children[ev.Step] = len(b.doc.Children)
		b.doc.Children = append(b.doc.Children, Child{Kind: ChildWait, WorkflowID: ws.WorkflowID, Step: ev.Step,
			Status: ChildRunning, ScheduledSeq: ev.Seq, ScheduledAt: ev.Time})
		return nil
	}
	c, err := history.DataOf[history.Closed](ev)
	if err != nil {
		return err
	}
	var f *Failure
	if c.Failure != nil {
		f = b.failure(ev, *c.Failure)
	}
	i, ok := b.children[ev.Step]
	if !ok || b.doc.Children[i].Status != ChildRunning {
		return nil
	}
	ch := &b.doc.Children[i]
	ch.RunID, ch.ClosedSeq, ch.ClosedAt = c.RunID, ev.Seq, ev.Time
	if ev.Type == history.ChildWorkflowFailed || ev.Type == history.WorkflowWaitFailed {
		ch.Status, ch.Failure = ChildFailed, f
		return nil
	}
	ch.Status, ch.Output = ChildCompleted, orNull(c.Output)
	return nil
}

// compensation folds CompensationStarted / Completed / Failed, matched by the compensated step.
func (b *builder) compensation(ev history.Event) error {
	c, err := history.DataOf[history.Compensation](ev)
	if err != nil {
		return err
	}
	step := c.Step
	if step == "" {
		step = ev.Step
	}
	if ev.Type == history.CompensationStarted {
		b.comps[step] = len(b.doc.Compensations)
		b.doc.Compensations = append(b.doc.Compensations, Compensation{Step: step, Reason: c.Reason,
			OutcomeUnknown: c.Unknown, Status: CompensationStarted, StartedSeq: ev.Seq, StartedAt: ev.Time})
		return nil
	}
	var f *Failure
	if c.Failure != nil {
		f = b.failure(ev, *c.Failure)
	}
	i, ok := b.comps[step]
	if !ok || b.doc.Compensations[i].Status != CompensationStarted {
		return nil
	}
	cp := &b.doc.Compensations[i]
	cp.EndedSeq, cp.EndedAt, cp.Status = ev.Seq, ev.Time, CompensationCompleted
	if ev.Type == history.CompensationFailed {
		cp.Status, cp.Failure = CompensationFailed, f
	}
	return nil
}
