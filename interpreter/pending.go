package interpreter

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Work is something the run waits on that needs a durable task: an activity try, a timer, a
// child run or a workflow wait. Pending lists them so an engine can rebuild lost tasks
// (wend repair) or create them for a run built from copied history (wend retry).
type Work struct {
	Kind     history.TaskKind
	Step     string
	ExecID   string // activity
	Attempt  int    // activity: the try the task is for
	Schedule history.ActivitySchedule
	TimerID  string          // timer
	At       time.Time       // timer: fire time; activity: when the try is due (zero: now)
	Data     json.RawMessage // child: ChildSchedule; wait: WaitSchedule
}

// Pending returns the run's open work in a stable order.
func (r *Run) Pending() []Work {
	var out []Work
	for id, n := range r.activities.all() {
		if n.state != running {
			continue
		}
		out = append(out, Work{Kind: history.TaskActivity, Step: n.path, ExecID: id, Attempt: n.attempt,
			Schedule: n.sched, At: n.retryAt})
	}
	for id, t := range r.timers.all() {
		out = append(out, Work{Kind: history.TaskTimer, Step: t.n.path, TimerID: id, At: t.at})
	}
	for id, t := range r.wfTimers {
		out = append(out, Work{Kind: history.TaskTimer, TimerID: id, At: t.at})
	}
	for path, n := range r.children.all() {
		kind := history.TaskWait
		if n.s.Kind == spec.KindRunWorkflow {
			kind = history.TaskChild
		}
		out = append(out, Work{Kind: kind, Step: path, Data: n.waitData})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Step+a.ExecID+a.TimerID < b.Step+b.ExecID+b.TimerID
	})
	return out
}

// FailedActivity returns the execution id of the activity whose failure closed the run, if
// the run failed that way ("" otherwise): what wend retry can start over.
func FailedActivity(events []history.Event) (execID string, cut int) {
	if len(events) == 0 || events[len(events)-1].Type != history.WorkflowFailed {
		return "", 0
	}
	c, err := history.DataOf[history.Closed](events[len(events)-1])
	if err != nil || c.Failure == nil || c.Failure.ActivityExecID == "" {
		return "", 0
	}
	for i := len(events) - 1; i > 0; i-- {
		e := events[i]
		if e.Type == history.ActivityFailed && e.ActivityExecutionID == c.Failure.ActivityExecID {
			// The input right before it is the failed try; the retry history stops before it.
			for j := i - 1; j > 0; j-- {
				if !events[j].Type.Decision() {
					return c.Failure.ActivityExecID, j
				}
			}
		}
	}
	return "", 0
}

// Awaits reports whether the run still waits on the child run or workflow wait it started
// for a step: an engine drops the outcome of one it stopped waiting on (timed out or
// cancelled), as Expects does for activities.
func (r *Run) Awaits(step string) bool {
	n := r.children.at(step)
	return n != nil && n.state == running
}
