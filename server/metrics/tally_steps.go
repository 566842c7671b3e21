package metrics

import (
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// staticSteps sums the instances of one static step path; the status of the instance at the
// static path itself (outside a for_each) is kept here, not in tally.steps.
type staticSteps struct {
	n          [len(stepStatuses)]int32
	self       uint8     // 1 + the status of the instance at the static path; 0: none yet
	start, end time.Time // earliest start; latest end of a finished instance
}

// stepStatuses are an instance's statuses; "" is one with events none of which says how far.
var stepStatuses = [...]string{"", runview.StepRunning, runview.StepRetrying, runview.StepWaiting,
	runview.StepCompleted, runview.StepFailed, runview.StepCancelled}

func stepIndex(s string) uint8 {
	for i, x := range stepStatuses {
		if x == s {
			return uint8(i)
		}
	}
	return 0
}

// step folds ev into its step instance, as runview's stepState.fold does; false when the
// latest end of the static path's finished instances is no longer known.
func (t *tally) step(path string, ev history.Event) bool {
	static := runview.StaticPath(path)
	ss, _ := t.statics.get(static)
	if ss == nil {
		ss = &staticSteps{start: ev.Time}
		t.statics.set(static, ss)
		t.bytes += entryBytes + 80 + len(static)
	}
	var cur uint8
	ok := true
	if path == static {
		if ok = ss.self > 0; ok {
			cur = ss.self - 1
		} else {
			ss.self = 1
		}
	} else if cur, ok = t.steps[path]; !ok {
		put(&t.steps, path, 0)
		t.bytes += entryBytes + len(path)
	}
	if !ok {
		ss.n[0]++
		if ev.Time.Before(ss.start) {
			ss.start = ev.Time
		}
	}
	status := stepStatuses[cur]
	next := ""
	switch ev.Type {
	case history.ActivityScheduled, history.ActivityStarted, history.ChildWorkflowScheduled, history.WorkflowWaitScheduled:
		next = runview.StepRunning
	case history.ActivityRetryScheduled:
		next = runview.StepRetrying
	case history.TimerScheduled:
		next = runview.StepWaiting
	case history.ActivityCompleted, history.TimerFired, history.SignalApplied, history.ChildWorkflowCompleted, history.WorkflowWaitCompleted:
		next = runview.StepCompleted
	case history.ActivityFailed, history.StepFailed, history.ChildWorkflowFailed, history.WorkflowWaitFailed:
		next = runview.StepFailed
	case history.ActivityCancelled:
		next = runview.StepCancelled
	case history.TimerCancelled:
		if status == runview.StepWaiting {
			next = runview.StepCancelled
		}
	}
	done := runview.StepDone(status)
	if next == "" || done && next != runview.StepFailed {
		return true
	}
	i := stepIndex(next)
	ss.n[cur]--
	ss.n[i]++
	if path == static {
		ss.self = i + 1
	} else {
		t.steps[path] = i
	}
	switch {
	case !runview.StepDone(next):
	case path == static: // the path's one instance: its end is the latest
		ss.end = ev.Time
	case !done:
		if ev.Time.After(ss.end) {
			ss.end = ev.Time
		}
	case ev.Time.Before(ss.end):
		return false // a finished instance ends again, earlier than the latest: which is latest now?
	default:
		ss.end = ev.Time
	}
	return true
}

// stepRank orders statuses by what an operator must see first, as runview's step tree does.
var stepRank = map[string]int{runview.StepFailed: 7, runview.StepRetrying: 6, runview.StepWaiting: 5, runview.StepRunning: 4,
	runview.StepCancelled: 3, runview.StepCaught: 2, runview.StepCompleted: 1, runview.StepNone: 0}

// row is a leaf step's row as runview's step tree makes it: its status, its duration, and
// whether it is finished with an end (what the latency histogram takes).
func (t *tally) row(l runview.LeafStep) (status string, d time.Duration, ended bool) {
	ss, _ := t.statics.get(l.Path)
	if ss == nil {
		return runview.StepNone, 0, false
	}
	rank, allDone := -1, true
	for i, n := range ss.n {
		if n == 0 {
			continue
		}
		st := stepStatuses[i]
		if st == "" {
			st = runview.StepRunning
		}
		if !runview.StepDone(st) {
			allDone = false
		}
		if r := stepRank[st]; r > rank {
			status, rank = st, r
		}
	}
	if rank < 0 {
		return runview.StepNone, 0, false
	}
	if status == runview.StepFailed && l.Catch {
		status = runview.StepCaught
	}
	if !allDone || ss.end.IsZero() {
		return status, 0, false
	}
	return status, ss.end.Sub(ss.start), runview.StepDone(status)
}
