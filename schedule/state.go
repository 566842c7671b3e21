package schedule

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrBadRequest is wrapped by errors about a request's arguments (a backfill range).
var ErrBadRequest = errors.New("bad request")

// Def is a schedule as the runner uses it (spec.Schedule compiled).
type Def struct {
	ID            string
	Timing        Timing
	Jitter        time.Duration
	Overlap       Overlap
	CatchupWindow time.Duration // fires older than this when noticed are missed; 0: DefaultCatchupWindow
	Paused        bool          // the declared state; an operator's pause or resume overrides it
}

// DefaultCatchupWindow is Temporal's default: after an outage, fires of the last year still run
// (under the overlap policy, so a skip schedule runs one of them).
const DefaultCatchupWindow = 365 * 24 * time.Hour

// MaxTickFires bounds the fires one Tick handles, so a long outage of a fast schedule is worked
// off in bounded steps (each committed) rather than one unbounded one.
const MaxTickFires = 1000

// MaxBackfill bounds the fires of one backfill request.
const MaxBackfill = 10000

// RecentKept is how many fire outcomes a schedule's state keeps for show.
const RecentKept = 20

// Fire is one firing of a schedule: its nominal time names its run.
type Fire struct {
	Nominal    time.Time `json:"nominal"`
	At         time.Time `json:"at"` // when it was due (nominal plus jitter) or asked for
	WorkflowID string    `json:"workflow_id"`
	Kind       string    `json:"kind,omitempty"`    // "" calendar, "trigger" or "backfill"
	Overlap    Overlap   `json:"overlap,omitempty"` // the policy that applies to it
}

// Outcome results.
const (
	Started   = "started"
	Skipped   = "skipped"   // the overlap policy dropped it
	Missed    = "missed"    // older than the catch-up window when wend noticed it
	Buffered  = "buffered"  // waits for the open runs to close
	Replaced  = "replaced"  // a newer buffered fire took its place (cancel_other)
	Cancelled = "cancelled" // the open runs were cancelled for it (cancel_other)
)

// Outcome is what became of a fire.
type Outcome struct {
	Fire
	Result string    `json:"result"`
	Time   time.Time `json:"time"` // when it was decided
}

// Counts are a schedule's totals since it was first seen.
type Counts struct {
	Started uint64 `json:"started"`
	Skipped uint64 `json:"skipped"`
	Missed  uint64 `json:"missed"`
}

// State is a schedule's durable state. The runner commits it before acting on what changed:
// Starting and Stopping are intents, redone (idempotently) after a crash.
type State struct {
	Last     time.Time `json:"last"`             // the nominal time the calendar has been handled up to
	Paused   *bool     `json:"paused,omitempty"` // an operator's pause or resume; nil: as declared
	Note     string    `json:"note,omitempty"`
	Buffered []Fire    `json:"buffered,omitempty"`
	Starting []Fire    `json:"starting,omitempty"` // to start, by id (idempotent)
	Stopping []Stop    `json:"stopping,omitempty"` // open runs to cancel or terminate
	Open     []string  `json:"open,omitempty"`     // workflow ids started and not seen closed
	Asked    []string  `json:"asked,omitempty"`    // open runs already asked to cancel: not asked twice
	Recent   []Outcome `json:"recent,omitempty"`   // newest last
	Counts   Counts    `json:"counts"`
}

// Stop is an intent to end an open run for a newer fire.
type Stop struct {
	WorkflowID string `json:"workflow_id"`
	Terminate  bool   `json:"terminate,omitempty"` // else cancel
	For        string `json:"for"`                 // the fire's workflow id, for the reason
}

// IsPaused is the effective pause: the operator's, else the declared one.
func (st *State) IsPaused(d Def) bool {
	if st.Paused != nil {
		return *st.Paused
	}
	return d.Paused
}

// WorkflowID names the run of a fire: the schedule id and the nominal time, so a fire found
// again after a crash (or by a backfill) starts the same run, at most once.
func WorkflowID(scheduleID string, nominal time.Time) string {
	return scheduleID + "-" + nominal.UTC().Format(time.RFC3339Nano)
}

// NextFire is the next calendar fire after st.Last: its nominal time and when it is due.
func NextFire(d Def, st *State) (nominal, due time.Time) {
	n := d.Timing.Next(st.Last)
	if n.IsZero() {
		return n, n
	}
	return n, n.Add(Jitter(d.ID, n, d.Jitter))
}

// Init sets the state of a schedule seen for the first time: it fires from now on.
func Init(now time.Time) State { return State{Last: now} }

// Tick works the calendar up to now: it prunes closed runs (isOpen), starts buffered fires
// whose turn came, and decides every fire due by now (at most MaxTickFires). It reports
// whether st changed, and whether fires remain due (call again after committing).
func Tick(d Def, st *State, now time.Time, isOpen func(workflowID string) bool) (changed, more bool) {
	changed = prune(st, isOpen)
	if drain(d, st, now) {
		changed = true
	}
	if st.IsPaused(d) {
		if st.Last.Before(now) {
			st.Last, changed = now, true // a paused schedule lets its fires pass
		}
		return changed, false
	}
	window := d.CatchupWindow
	if window <= 0 {
		window = DefaultCatchupWindow
	}
	if skipMissed(d, st, now.Add(-window), now) {
		changed = true
	}
	for i := 0; i < MaxTickFires; i++ {
		n, due := NextFire(d, st)
		if n.IsZero() || due.After(now) {
			return changed, false
		}
		st.Last, changed = n, true
		f := Fire{Nominal: n, At: due, WorkflowID: WorkflowID(d.ID, n), Overlap: d.Overlap}
		if now.Sub(due) > window {
			st.Counts.Missed++
			record(st, f, Missed, now)
			continue
		}
		fire(st, f, now)
	}
	n, due := NextFire(d, st)
	return changed, !n.IsZero() && !due.After(now)
}

// skipMissed counts, without deciding them one by one, the fires certainly older than the
// catch-up window (due before cut even with the most jitter), so a long outage of a fast schedule
// costs arithmetic, not a commit per fire. The last of them is recorded in Recent.
func skipMissed(d Def, st *State, cut, now time.Time) bool {
	cut = cut.Add(-d.Jitter) // a fire due after cut is decided by Tick itself
	var n uint64
	var lastAt time.Time
	if e := d.Timing.every; e > 0 && d.Timing.cron == nil {
		first := d.Timing.Next(st.Last)
		if first.IsZero() || !first.Before(cut) {
			return false
		}
		n = uint64((cut.Sub(first)-1)/e) + 1
		lastAt = first.Add(time.Duration(n-1) * e)
	} else {
		for at := d.Timing.Next(st.Last); !at.IsZero() && at.Before(cut); at = d.Timing.Next(at) {
			n, lastAt = n+1, at
		}
	}
	if n == 0 {
		return false
	}
	st.Last = lastAt
	st.Counts.Missed += n
	record(st, Fire{Nominal: lastAt, At: lastAt.Add(Jitter(d.ID, lastAt, d.Jitter)), WorkflowID: WorkflowID(d.ID, lastAt), Overlap: d.Overlap}, Missed, now)
	return true
}

// Trigger fires the schedule now, out of its calendar, under its overlap policy or o. Its
// nominal time is now to the second, as calendar fires and Temporal's triggers are named, so
// two triggers within one second are one fire.
func Trigger(d Def, st *State, now time.Time, o Overlap) Fire {
	if o == "" {
		o = d.Overlap
	}
	nominal := now.UTC().Truncate(time.Second)
	f := Fire{Nominal: nominal, At: now, WorkflowID: WorkflowID(d.ID, nominal), Kind: "trigger", Overlap: o}
	fire(st, f, now)
	return f
}

// Backfill fires every calendar time in [from, to), oldest first, under the overlap policy o
// (or the schedule's). Each gets the id its calendar fire has, so a time that fired already
// starts nothing new.
func Backfill(d Def, st *State, from, to, now time.Time, o Overlap) (int, error) {
	if !from.Before(to) {
		return 0, fmt.Errorf("%w: backfill: FROM must be before TO", ErrBadRequest)
	}
	if o == "" {
		o = d.Overlap
	}
	var fires []Fire
	for n := d.Timing.Next(from.Add(-time.Nanosecond)); !n.IsZero() && n.Before(to); n = d.Timing.Next(n) {
		if len(fires) == MaxBackfill {
			return 0, fmt.Errorf("%w: backfill: more than %d fires between %s and %s; split the range", ErrBadRequest, MaxBackfill,
				from.Format(time.RFC3339), to.Format(time.RFC3339))
		}
		fires = append(fires, Fire{Nominal: n, At: now, WorkflowID: WorkflowID(d.ID, n), Kind: "backfill", Overlap: o})
	}
	for _, f := range fires {
		fire(st, f, now)
	}
	return len(fires), nil
}

// fire decides one fire under its overlap policy.
func fire(st *State, f Fire, now time.Time) {
	switch Decide(f.Overlap, len(st.Open), len(st.Buffered)) {
	case Start:
		start(st, f, now)
	case Drop:
		st.Counts.Skipped++
		record(st, f, Skipped, now)
	case Buffer:
		buffer(st, f, now)
	case CancelThenBuffer:
		for _, id := range st.Open {
			if !slices.Contains(st.Asked, id) { // a cancelled run may take a while to compensate
				st.Stopping = appendStop(st.Stopping, Stop{WorkflowID: id, For: f.WorkflowID})
				st.Asked = append(st.Asked, id)
			}
		}
		buffer(st, f, now)
	case TerminateThenStart:
		for _, id := range st.Open {
			st.Stopping = appendStop(st.Stopping, Stop{WorkflowID: id, Terminate: true, For: f.WorkflowID})
		}
		st.Open = nil // terminated before the new run starts (Stopping goes first)
		start(st, f, now)
	}
}

func buffer(st *State, f Fire, now time.Time) {
	if f.Overlap == CancelOther { // only the newest fire waits for the cancelled run
		for _, old := range st.Buffered {
			st.Counts.Skipped++
			record(st, old, Replaced, now)
		}
		st.Buffered = st.Buffered[:0]
	}
	st.Buffered = append(st.Buffered, f)
	record(st, f, Buffered, now)
}

func appendStop(s []Stop, x Stop) []Stop {
	for _, y := range s {
		if y.WorkflowID == x.WorkflowID {
			return s
		}
	}
	return append(s, x)
}

func start(st *State, f Fire, now time.Time) {
	st.Starting = append(st.Starting, f)
	st.Open = append(st.Open, f.WorkflowID)
	st.Counts.Started++
	record(st, f, Started, now)
}

// drain starts buffered fires once no run of the schedule is open: one at a time for
// buffer_one, buffer_all and cancel_other.
func drain(d Def, st *State, now time.Time) bool {
	if len(st.Open) > 0 || len(st.Buffered) == 0 {
		return false
	}
	f := st.Buffered[0]
	st.Buffered = append([]Fire(nil), st.Buffered[1:]...)
	start(st, f, now)
	return true
}

// prune forgets open runs that closed, and stop intents whose run closed.
func prune(st *State, isOpen func(string) bool) bool {
	if isOpen == nil {
		return false
	}
	changed := false
	open := st.Open[:0]
	for _, id := range st.Open {
		if isOpen(id) || starting(st, id) {
			open = append(open, id)
		} else {
			changed = true
		}
	}
	st.Open = open
	asked := st.Asked[:0]
	for _, id := range st.Asked {
		if slices.Contains(st.Open, id) {
			asked = append(asked, id)
		}
	}
	if len(asked) != len(st.Asked) {
		changed = true
	}
	st.Asked = asked
	return changed
}

func starting(st *State, id string) bool {
	for _, f := range st.Starting {
		if f.WorkflowID == id {
			return true
		}
	}
	return false
}

func record(st *State, f Fire, result string, now time.Time) {
	st.Recent = append(st.Recent, Outcome{Fire: f, Result: result, Time: now})
	if n := len(st.Recent) - RecentKept; n > 0 {
		st.Recent = append([]Outcome(nil), st.Recent[n:]...)
	}
}
