package driver

import (
	"github.com/wendflow/wend/history"
	"go.temporal.io/sdk/workflow"
)

// effect turns one decision into Temporal commands. Decisions without a command
// (StepFailed, SignalApplied, Compensation*, ActivityFailed, the terminal events) live in the
// wend event list only.
func (d *driver) effect(ev history.Event) {
	switch ev.Type {
	case history.ActivityScheduled:
		d.startActivity(ev.Step, ev.ActivityExecutionID, ev.Attempt, ev.Time)
	case history.ActivityRetryScheduled:
		rs, _ := history.DataOf[history.RetrySchedule](ev)
		d.startActivity(ev.Step, ev.ActivityExecutionID, rs.NextAttempt, rs.AvailableAt)
	case history.ActivityCancelled:
		d.cancel(taskKey(ev.ActivityExecutionID, ev.Attempt))
	case history.TimerScheduled:
		ts, _ := history.DataOf[history.TimerSchedule](ev)
		d.startTimer(ev.Step, ts)
	case history.TimerCancelled:
		ref, _ := history.DataOf[history.TimerRef](ev)
		d.cancel(timerKey(ref.TimerID))
	case history.ChildWorkflowScheduled:
		cs, _ := history.DataOf[history.ChildSchedule](ev)
		d.startChild(ev.Step, cs)
	case history.ChildWorkflowCancelRequested:
		// terminate=true only comes from a wend terminate, which on Temporal is the server's
		// TerminateWorkflow: no workflow code runs, ParentClosePolicy ends the children.
		if f := d.children[ev.Step]; f != nil {
			d.cancelled = append(d.cancelled, f)
		}
		d.cancel(childKey(ev.Step))
	case history.WorkflowWaitScheduled:
		ws, _ := history.DataOf[history.WaitSchedule](ev)
		d.startWait(ev.Step, ws)
	}
}

func timerKey(id string) string   { return "timer/" + id }
func childKey(path string) string { return "child/" + path }
func waitKey(path string) string  { return "wait/" + path }

// cancel cancels the command remembered under key, if it is still open.
func (d *driver) cancel(key string) {
	if c := d.cancels[key]; c != nil {
		c()
		delete(d.cancels, key)
	}
}

// withCancel makes a cancellable context for one command, remembered under key.
func (d *driver) withCancel(key string) workflow.Context {
	ctx, cancel := workflow.WithCancel(d.ctx)
	d.cancels[key] = cancel
	return ctx
}

// startTimer arms a wend timer; one already due fires at once, without a Temporal timer.
func (d *driver) startTimer(step string, ts history.TimerSchedule) {
	fired := history.Event{Type: history.TimerFired, Step: step, Data: history.MustData(history.TimerRef{TimerID: ts.TimerID})}
	wait := ts.FireAt.Sub(workflow.Now(d.ctx))
	if wait <= 0 {
		d.queue = append(d.queue, fired)
		return
	}
	key := timerKey(ts.TimerID)
	f := workflow.NewTimer(d.withCancel(key), wait)
	workflow.Go(d.ctx, func(gctx workflow.Context) {
		if f.Get(gctx, nil) != nil || d.cancels[key] == nil {
			return // cancelled (a timer may fire in the task that cancels it): nothing to report
		}
		delete(d.cancels, key)
		d.send(gctx, fired)
	})
}

// dropStale forgets the children and waits the run stopped waiting on (the step timed out or
// was cancelled) and cancels their await activities: the interpreter records no decision for
// a wait it gives up. A timed-out child keeps running, as it does locally, until its parent
// closes (ParentClosePolicy).
func (d *driver) dropStale() {
	for i := 0; i < len(d.awaiting); {
		step := d.awaiting[i]
		if d.r.Awaits(step) {
			i++
			continue
		}
		d.awaiting = append(d.awaiting[:i], d.awaiting[i+1:]...)
		d.cancel(waitKey(step))
	}
}
