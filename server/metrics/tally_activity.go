package metrics

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// openActivity is an execution not closed yet: its tries from the first not closed on; the
// tries before are counted in closed.
type openActivity struct {
	name      string
	status    string
	closed    map[string]int
	closedMax int // the highest number among the counted tries
	tries     []try
}

type try struct {
	n       int
	outcome string
}

func (tr *try) close(outcome string) bool {
	if tr == nil || tr.outcome != runview.AttemptScheduled && tr.outcome != runview.AttemptRunning {
		return false
	}
	tr.outcome = outcome
	return true
}

// activity folds an activity event as runview does (fold_activity.go).
func (t *tally) activity(ev history.Event) bool {
	id := ev.ActivityExecutionID
	if ev.Type == history.ActivityScheduled {
		if _, dup := t.acts[id]; dup {
			return true // the first is kept
		}
		s, err := history.DataOf[history.ActivitySchedule](ev)
		if err != nil {
			return false
		}
		a := &openActivity{name: s.Plugin + "." + s.Activity, status: runview.ActivityScheduled,
			tries: []try{{n: max(ev.Attempt, 1), outcome: runview.AttemptScheduled}}}
		put(&t.acts, id, a)
		t.bytes += activityBytes + len(id) + len(a.name)
		return true
	}
	a := t.acts[id]
	if a == nil {
		return t.activityGone(ev)
	}
	at, ok := a.try(ev.Attempt)
	if !ok {
		return false
	}
	switch ev.Type {
	case history.ActivityStarted:
		if at != nil && at.outcome == runview.AttemptScheduled {
			at.outcome, a.status = runview.AttemptRunning, runview.ActivityRunning
		}
	case history.ActivityCompleted:
		if _, err := history.DataOf[history.ActivityResult](ev); err != nil {
			return false
		}
		if at.close(runview.AttemptCompleted) {
			a.status = runview.ActivityCompleted
		}
	case history.ActivityAttemptFailed, history.ActivityTimedOut:
		af, err := history.DataOf[history.AttemptFailure](ev)
		if err != nil {
			return false
		}
		t.failure(af.Failure)
		outcome := runview.AttemptFailed
		if ev.Type == history.ActivityTimedOut {
			outcome = runview.AttemptTimedOut
		}
		at.close(outcome)
	case history.ActivityAttemptInterrupted:
		if _, err := history.DataOf[history.AttemptInterruption](ev); err != nil {
			return false
		}
		at.close(runview.AttemptInterrupted)
	case history.ActivityRetryScheduled:
		rs, err := history.DataOf[history.RetrySchedule](ev)
		if err != nil {
			return false
		}
		a.tries = append(a.tries, try{n: rs.NextAttempt, outcome: runview.AttemptScheduled})
		a.status = runview.ActivityRetrying
		t.bytes += 16
	case history.ActivityFailed:
		af, err := history.DataOf[history.AttemptFailure](ev)
		if err != nil {
			return false
		}
		t.failure(af.Failure)
		at.close(runview.AttemptFailed)
		a.status = runview.ActivityFailed
	case history.ActivityCancelled:
		at.close(runview.AttemptCancelled)
		a.status = runview.ActivityCancelled
	}
	t.settleActivity(id, a)
	return true
}

// try is the execution's first try numbered n (nil: none), and false when that may be one
// already counted.
func (a *openActivity) try(n int) (*try, bool) {
	for i := range a.tries {
		if a.tries[i].n == n {
			return &a.tries[i], n > a.closedMax
		}
	}
	return nil, true // a counted try numbered n is closed: it changes as no try would
}

// settleActivity counts the execution's leading closed tries, and the execution once it is
// closed with no try open: no event the interpreter writes changes it after.
func (t *tally) settleActivity(id string, a *openActivity) {
	k := 0
	for k < len(a.tries) && a.tries[k].outcome != runview.AttemptScheduled && a.tries[k].outcome != runview.AttemptRunning {
		if a.closed == nil {
			a.closed = map[string]int{}
		}
		a.closed[a.tries[k].outcome]++
		a.closedMax = max(a.closedMax, a.tries[k].n)
		k++
	}
	if k > 0 {
		a.tries = append(a.tries[:0], a.tries[k:]...)
		t.bytes -= 16 * k
	}
	if len(a.tries) > 0 || a.status != runview.ActivityCompleted && a.status != runview.ActivityFailed && a.status != runview.ActivityCancelled {
		return
	}
	if t.done[a.name] == nil {
		put(&t.done, a.name, map[string]int{})
		put(&t.doneTry, a.name, map[string]int{})
		t.bytes += 2*entryBytes + 2*len(a.name)
	}
	t.done[a.name][a.status]++
	for o, n := range a.closed {
		t.doneTry[a.name][o] += n
	}
	delete(t.acts, id)
	t.bytes -= activityBytes + len(id) + len(a.name)
}

// activityGone folds an event of an execution not held: one never scheduled, or one counted
// as closed. Where the two would differ, the tally cannot follow.
func (t *tally) activityGone(ev history.Event) bool {
	af, err := history.DataOf[history.AttemptFailure](ev)
	told := err == nil && af.Failure.Message+af.Failure.Category != "" // a never scheduled one's failure is counted
	switch ev.Type {
	case history.ActivityStarted, history.ActivityHeartbeatRecorded:
		return !told
	case history.ActivityCompleted:
		_, err := history.DataOf[history.ActivityResult](ev)
		return err == nil && !told
	case history.ActivityAttemptInterrupted:
		_, err := history.DataOf[history.AttemptInterruption](ev)
		return err == nil && !told
	case history.ActivityAttemptFailed, history.ActivityTimedOut:
		if err != nil || !told {
			return false
		}
		t.failure(af.Failure)
		return true
	}
	return false // a retry, a final failure or a cancel would reopen or change a closed one
}
