package runview

import (
	"github.com/wendflow/wend/history"
)

// child folds child-run and workflow-wait events; the closing events name the parent's step.
func (v *View) child(ev history.Event) error {
	switch ev.Type {
	case history.ChildWorkflowScheduled:
		cs, err := history.DataOf[history.ChildSchedule](ev)
		if err != nil {
			return err
		}
		v.children[ev.Step] = len(v.Children)
		v.Children = append(v.Children, Child{Kind: ChildRun, WorkflowID: cs.WorkflowID, Step: ev.Step,
			SpecFile: cs.SpecFile, Input: cs.Input, Status: ChildRunning, ScheduledSeq: ev.Seq, ScheduledAt: ev.Time})
		return nil
	case history.WorkflowWaitScheduled:
		ws, err := history.DataOf[history.WaitSchedule](ev)
		if err != nil {
			return err
		}
		v.children[ev.Step] = len(v.Children)
		v.Children = append(v.Children, Child{Kind: ChildWait, WorkflowID: ws.WorkflowID, Step: ev.Step,
			Status: ChildRunning, ScheduledSeq: ev.Seq, ScheduledAt: ev.Time})
		return nil
	}
	c, err := history.DataOf[history.Closed](ev)
	if err != nil {
		return err
	}
	var f *Failure
	if c.Failure != nil {
		f = v.failure(ev, *c.Failure)
	}
	i, ok := v.children[ev.Step]
	if !ok || v.Children[i].Status != ChildRunning {
		return nil
	}
	ch := &v.Children[i]
	ch.RunID, ch.ClosedSeq, ch.ClosedAt = c.RunID, ev.Seq, ev.Time
	if ev.Type == history.ChildWorkflowFailed || ev.Type == history.WorkflowWaitFailed {
		ch.Status, ch.Failure = ChildFailed, f
		return nil
	}
	ch.Status, ch.Output = ChildCompleted, orNull(c.Output)
	return nil
}

// compensation folds CompensationStarted / Completed / Failed, matched by the compensated step.
func (v *View) compensation(ev history.Event) error {
	c, err := history.DataOf[history.Compensation](ev)
	if err != nil {
		return err
	}
	step := c.Step
	if step == "" {
		step = ev.Step
	}
	if ev.Type == history.CompensationStarted {
		v.comps[step] = len(v.Compensations)
		v.Compensations = append(v.Compensations, Compensation{Step: step, Reason: c.Reason,
			OutcomeUnknown: c.Unknown, Status: CompensationStarted, StartedSeq: ev.Seq, StartedAt: ev.Time})
		return nil
	}
	var f *Failure
	if c.Failure != nil {
		f = v.failure(ev, *c.Failure)
	}
	i, ok := v.comps[step]
	if !ok || v.Compensations[i].Status != CompensationStarted {
		return nil
	}
	cp := &v.Compensations[i]
	cp.EndedSeq, cp.EndedAt, cp.Status = ev.Seq, ev.Time, CompensationCompleted
	if ev.Type == history.CompensationFailed {
		cp.Status, cp.Failure = CompensationFailed, f
	}
	return nil
}
