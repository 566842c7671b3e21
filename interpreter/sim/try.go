package sim

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
)

// Try is one try of an activity the run is owed.
type Try struct {
	Step     string
	ExecID   string
	Attempt  int
	At       time.Time // when it may start: at once for a first try, its available_at for a retry
	Schedule history.ActivitySchedule
	Input    any // Schedule.Input, decoded
}

// TryOf is the try an ActivityScheduled or ActivityRetryScheduled decision asks for.
func (h *Host) TryOf(d history.Event) Try {
	tr := Try{Step: d.Step, ExecID: d.ActivityExecutionID, Attempt: d.Attempt, At: h.Now,
		Schedule: h.sched[d.ActivityExecutionID]}
	if d.Type == history.ActivityRetryScheduled {
		rs, _ := history.DataOf[history.RetrySchedule](d)
		tr.Attempt, tr.At = rs.NextAttempt, rs.AvailableAt
	}
	_ = json.Unmarshal(tr.Schedule.Input, &tr.Input)
	return tr
}

// Result is the input that ends try tr: ActivityCompleted with out when f is nil, else
// ActivityTimedOut for a failure of category timeout (as the engine records a try whose
// timeout expired) and ActivityAttemptFailed for any other.
func Result(tr Try, out any, f *history.Failure) history.Event {
	ev := history.Event{Step: tr.Step, ActivityExecutionID: tr.ExecID, Attempt: tr.Attempt}
	switch {
	case f == nil:
		ev.Type, ev.Data = history.ActivityCompleted, history.MustData(history.ActivityResult{Output: history.MustData(out)})
	case f.Category == history.CategoryTimeout:
		ev.Type, ev.Data = history.ActivityTimedOut, history.MustData(history.AttemptFailure{Failure: *f})
	default:
		ev.Type, ev.Data = history.ActivityAttemptFailed, history.MustData(history.AttemptFailure{Failure: *f})
	}
	return ev
}
