package runview

import (
	"fmt"
	"time"

	"github.com/wendflow/wend/history"
)

// activity folds one activity event into its execution. Attempts are rebuilt from the typed
// events alone: ActivityScheduled opens try 1, each ActivityRetryScheduled closes nothing but
// opens the next try, and the outcome events close the try whose number they carry.
func (v *View) activity(ev history.Event) error {
	if ev.Type == history.ActivityScheduled {
		return v.activityScheduled(ev)
	}
	i, ok := v.acts[ev.ActivityExecutionID]
	if !ok {
		// No execution to attach it to (a damaged history): it stays in the history, and
		// a failure it carries still goes to failures[].
		if af, err := history.DataOf[history.AttemptFailure](ev); err == nil && af.Failure.Message+af.Failure.Category != "" {
			v.failure(ev, af.Failure)
		}
		return nil
	}
	v.ownAttempts(i)
	a := &v.Activities[i]
	at := a.attempt(ev.Attempt)
	switch ev.Type {
	case history.ActivityStarted:
		if at != nil && at.Outcome == AttemptScheduled {
			at.Outcome, at.StartedAt = AttemptRunning, ev.Time
			a.Status, a.NextAttemptAt = ActivityRunning, time.Time{}
		}
	case history.ActivityHeartbeatRecorded:
		if at != nil {
			at.Heartbeats++
			at.LastHeartbeatAt = ev.Time
			if hb, err := history.DataOf[history.HeartbeatRecord](ev); err == nil && len(hb.Progress) > 0 {
				at.LastProgress = hb.Progress
			}
		}
	case history.ActivityCompleted:
		res, err := history.DataOf[history.ActivityResult](ev)
		if err != nil {
			return err
		}
		if at.close(ev, AttemptCompleted) {
			at.PluginSHA256 = res.PluginSHA256
			a.Status, a.ClosedAt, a.Output, a.NextAttemptAt = ActivityCompleted, ev.Time, orNull(res.Output), time.Time{}
		}
	case history.ActivityAttemptFailed, history.ActivityTimedOut:
		af, err := history.DataOf[history.AttemptFailure](ev)
		if err != nil {
			return err
		}
		outcome := AttemptFailed
		if ev.Type == history.ActivityTimedOut {
			outcome = AttemptTimedOut
		}
		f := v.failure(ev, af.Failure)
		if at.close(ev, outcome) {
			at.Error, at.PluginSHA256 = attemptError(f), af.PluginSHA256
		}
	case history.ActivityAttemptInterrupted:
		ai, err := history.DataOf[history.AttemptInterruption](ev)
		if err != nil {
			return err
		}
		if at.close(ev, AttemptInterrupted) {
			at.Interruption = ai.Reason
		}
	case history.ActivityRetryScheduled:
		rs, err := history.DataOf[history.RetrySchedule](ev)
		if err != nil {
			return err
		}
		if at != nil {
			at.Retry = &Retry{Seq: ev.Seq, RetryOfTaskID: rs.RetryOfTaskID, RetryAfterAttemptID: rs.RetryAfterAttemptID,
				RetryAfterAttempt: rs.RetryAfterAttempt, RetryBackoffSeconds: rs.RetryBackoffSeconds,
				AvailableAt: rs.AvailableAt, NextAttempt: rs.NextAttempt, Redelivery: rs.Redelivery}
		}
		a.Attempts = append(a.Attempts, newAttempt(a.ActivityExecutionID, rs.NextAttempt, rs.AvailableAt))
		a.Status, a.NextAttemptAt = ActivityRetrying, rs.AvailableAt
	case history.ActivityFailed:
		af, err := history.DataOf[history.AttemptFailure](ev)
		if err != nil {
			return err
		}
		f := v.failure(ev, af.Failure)
		// The final failure is the interpreter's verdict (a type listed in the step's
		// non_retryable is marked here, not by the plugin), so it replaces the try's error.
		at.close(ev, AttemptFailed)
		if at != nil {
			at.Error = attemptError(f)
		}
		a.Status, a.ClosedAt, a.NonRetryable, a.Failure, a.NextAttemptAt = ActivityFailed, ev.Time, f.NonRetryable, f, time.Time{}
	case history.ActivityCancelled:
		at.close(ev, AttemptCancelled)
		a.Status, a.ClosedAt, a.NextAttemptAt = ActivityCancelled, ev.Time, time.Time{}
	}
	return nil
}

func (v *View) activityScheduled(ev history.Event) error {
	if _, dup := v.acts[ev.ActivityExecutionID]; dup {
		return nil // the interpreter never does this; keep the first, the event stays listed
	}
	s, err := history.DataOf[history.ActivitySchedule](ev)
	if err != nil {
		return err
	}
	attempt := max(ev.Attempt, 1)
	v.acts[ev.ActivityExecutionID] = len(v.Activities)
	v.Activities = append(v.Activities, Activity{
		ActivityExecutionID: ev.ActivityExecutionID, Step: ev.Step, Plugin: s.Plugin, Activity: s.Activity,
		Status: ActivityScheduled, Input: orNull(s.Input), Tries: s.Tries, TimeoutMS: s.TimeoutMS,
		HeartbeatTimeoutMS: s.HeartbeatTimeout, ScheduledSeq: ev.Seq, ScheduledAt: ev.Time,
		Attempts: []Attempt{newAttempt(ev.ActivityExecutionID, attempt, ev.Time)},
	})
	return nil
}

func newAttempt(execID string, n int, due time.Time) Attempt {
	// The same format as the interpreter's AttemptID, the id the plugin was handed.
	return Attempt{Attempt: n, ActivityAttemptID: fmt.Sprintf("%s#%d", execID, n), Outcome: AttemptScheduled, ScheduledAt: due}
}

// attempt returns the try numbered n, or nil when the history never opened it.
func (a *Activity) attempt(n int) *Attempt {
	for i := range a.Attempts {
		if a.Attempts[i].Attempt == n {
			return &a.Attempts[i]
		}
	}
	return nil
}

// close ends an open try and reports whether it did. A report for a try that is already
// closed (a superseded attempt) changes nothing, as in the interpreter.
func (at *Attempt) close(ev history.Event, outcome string) bool {
	if at == nil || (at.Outcome != AttemptScheduled && at.Outcome != AttemptRunning) {
		return false
	}
	at.Outcome, at.EndedAt, at.EndedSeq = outcome, ev.Time, ev.Seq
	return true
}

func attemptError(f *Failure) *AttemptError {
	return &AttemptError{Type: f.Type, Message: f.Message, NonRetryable: f.NonRetryable, FailureCategory: f.FailureCategory}
}

// retryRequested closes the try that a retry run (wend retry) starts over from. The retry
// copies the failed run's history up to that try's outcome, which it leaves out, so without
// this the try would read as scheduled forever. It did fail: a retry starts only from the
// activity whose failure ended the run named in retry_of (its error is in that run's export).
func (v *View) retryRequested(ev history.Event) error {
	rr, err := history.DataOf[history.RetryRequest](ev)
	if err != nil {
		return err
	}
	i, ok := v.acts[rr.ActivityExecID]
	if !ok {
		return nil
	}
	v.ownAttempts(i)
	for k := range v.Activities[i].Attempts {
		v.Activities[i].Attempts[k].close(ev, AttemptFailed)
	}
	return nil
}
