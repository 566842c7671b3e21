package metrics

import (
	"encoding/json"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// tally is what the metrics need of one run's history, folded by the settles from the events
// committed since the one before: each event is folded once, and a scrape makes the run's
// summary from the tally without its events. It holds only what can still change: the
// activity executions and tries not closed, the timers and signals pending, the step
// instances; what closed is counted. So a long run costs what its open work and its steps
// do, not what its length does.
//
// A tally equals runview's fold of the same history as summarize reads it. Where it cannot
// tell what that fold would say without the events it let go (an event of an execution it
// counted as closed that would change it, an event without a time), fold reports false: the
// run's state then holds its whole history, as for a spec that waits for signals
// (runstate.go).
type tally struct {
	started bool
	runID   string // WorkflowStarted's: the record must agree, or the fold fails
	shape   *shape // the spec's leaf steps
	// first, file and sha are the spec the run started with, as a migration needs them.
	first     *shape
	file, sha string

	acts     map[string]*openActivity  // executions not closed, by id
	done     map[string]map[string]int // closed executions, by name and status
	doneTry  map[string]map[string]int // their tries, by name and outcome
	failures map[string]int
	nonRetry int

	timers   few[string]     // pending timer id -> its step
	nTimers  int             // timer schedulings pending (a rescheduled id leaves one behind)
	signals  map[uint64]bool // received seqs not applied
	nSignals int

	steps   map[string]uint8  // step instance path -> status (index in stepStatuses)
	statics few[*staticSteps] // static step path -> its instances' sums

	bytes int // about what the tally holds, for the counters' bound
}

const (
	tallyBytes    = 400 // the struct and its maps' headers
	entryBytes    = 64  // a map entry with its key's header
	activityBytes = 120
)

// newTally is an empty tally; its maps are made at their first entry (put), as most runs
// leave most of them empty.
func newTally() *tally {
	return &tally{bytes: tallyBytes}
}

func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

// fold folds ev, the event after the last folded; false when the tally cannot follow the
// history (it is then of no use).
func (t *tally) fold(ev history.Event, shapes *shapeCache) bool {
	if ev.Time.IsZero() || len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return false // a zero time reads as none in the step tree's sums
	}
	if !t.started && ev.Type != history.WorkflowStarted {
		return false
	}
	step := ev.Step
	if step == "" && (ev.Type == history.TimerFired || ev.Type == history.TimerCancelled) {
		// The timer's scheduling names the step (runview's atStep); one no longer pending may
		// have been scheduled or not: not known here.
		ref, err := history.DataOf[history.TimerRef](ev)
		if err != nil {
			return false
		}
		s, ok := t.timers.get(ref.TimerID)
		if !ok {
			return false
		}
		step = s
	}
	if !t.event(ev, shapes) {
		return false
	}
	return step == "" || ev.Type == history.WorkflowStarted || t.step(step, ev)
}

func (t *tally) event(ev history.Event, shapes *shapeCache) bool {
	switch ev.Type {
	case history.WorkflowStarted:
		if t.started {
			return false
		}
		st, err := history.DataOf[history.Started](ev)
		if err != nil {
			return false
		}
		t.started, t.runID, t.shape = true, st.RunID, shapes.of(st.SpecFile, st.SpecSource)
		t.first, t.file, t.sha = t.shape, st.SpecFile, st.SpecSHA256
		t.bytes += len(st.RunID) + len(st.SpecFile) + len(st.SpecSHA256)
		return true
	case history.ActivityScheduled, history.ActivityStarted, history.ActivityHeartbeatRecorded,
		history.ActivityCompleted, history.ActivityAttemptFailed, history.ActivityTimedOut,
		history.ActivityRetryScheduled, history.ActivityFailed, history.ActivityCancelled,
		history.ActivityAttemptInterrupted:
		return t.activity(ev)
	case history.TimerScheduled:
		ts, err := history.DataOf[history.TimerSchedule](ev)
		if err != nil {
			return false
		}
		if _, ok := t.timers.get(ts.TimerID); !ok {
			t.bytes += entryBytes + len(ts.TimerID) + len(ev.Step)
		}
		t.timers.set(ts.TimerID, ev.Step)
		t.nTimers++
		return true
	case history.TimerFired, history.TimerCancelled:
		ref, err := history.DataOf[history.TimerRef](ev)
		if err != nil {
			return false
		}
		if step, ok := t.timers.get(ref.TimerID); ok {
			t.timers.del(ref.TimerID)
			t.nTimers--
			t.bytes -= entryBytes + len(ref.TimerID) + len(step)
		}
		return true
	case history.SignalReceived, history.SignalApplied:
		s, err := history.DataOf[history.Signal](ev)
		if err != nil {
			return false
		}
		if ev.Type == history.SignalReceived {
			put(&t.signals, ev.Seq, true)
			t.nSignals++
			t.bytes += entryBytes
		} else if t.signals[s.ReceivedSeq] {
			delete(t.signals, s.ReceivedSeq)
			t.nSignals--
			t.bytes -= entryBytes
		}
		return true
	case history.ChildWorkflowScheduled:
		_, err := history.DataOf[history.ChildSchedule](ev)
		return err == nil
	case history.WorkflowWaitScheduled:
		_, err := history.DataOf[history.WaitSchedule](ev)
		return err == nil
	case history.ChildWorkflowCompleted, history.ChildWorkflowFailed, history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
		return t.closed(ev)
	case history.CompensationStarted, history.CompensationCompleted, history.CompensationFailed:
		c, err := history.DataOf[history.Compensation](ev)
		if err != nil {
			return false
		}
		if ev.Type != history.CompensationStarted && c.Failure != nil {
			t.failure(*c.Failure)
		}
		return true
	case history.StepFailed:
		af, err := history.DataOf[history.AttemptFailure](ev)
		if err != nil {
			return false
		}
		t.failure(af.Failure)
		return true
	case history.RetryRequested:
		rr, err := history.DataOf[history.RetryRequest](ev)
		if err != nil {
			return false
		}
		// Closes the execution's open tries; one counted as closed has none left.
		if a := t.acts[rr.ActivityExecID]; a != nil {
			for i := range a.tries {
				a.tries[i].close(runview.AttemptFailed)
			}
			t.settleActivity(rr.ActivityExecID, a)
		}
		return true
	case history.WorkflowMigrated:
		// The run goes on under the new text, unless it is the one it started with (runview's
		// Spec): the rows are the new text's, the step instances' statuses stay.
		m, err := history.DataOf[history.Migration](ev)
		switch {
		case err != nil || m.ToSHA256 == "":
			return false // the record's hash would decide
		case m.SpecSource == "" || m.ToSHA256 == t.sha:
			t.shape = t.first
		default:
			t.shape = shapes.of(t.file, m.SpecSource)
		}
		// A text that waits for signals needs the history held: not from here on.
		return t.shape == nil || !t.shape.signals
	case history.CancelRequested:
		_, err := history.DataOf[history.CancelRequest](ev)
		return err == nil
	}
	if ev.Type.Terminal() {
		return t.closed(ev)
	}
	return true
}

// closed counts the failure a closing event (a run's, a child's, a wait's) carries; false when
// its payload does not decode.
func (t *tally) closed(ev history.Event) bool {
	c, err := history.DataOf[history.Closed](ev)
	if err != nil {
		return false
	}
	if c.Failure != nil {
		t.failure(*c.Failure)
	}
	return true
}

func (t *tally) failure(f history.Failure) {
	cat := f.Category
	if cat == "" {
		cat = runview.Unclassified
	}
	if _, ok := t.failures[cat]; !ok {
		t.bytes += entryBytes
	}
	put(&t.failures, cat, t.failures[cat]+1)
	if f.NonRetryable {
		t.nonRetry++
	}
}

// summary is the run's summary as summarize makes it from the whole history.
func (t *tally) summary(r history.Run) *runSummary {
	s := newRunSummary()
	s.name, s.status, s.lastSeq = r.Name, r.Status, r.LastSeq
	if !t.started || r.RunID != "" && t.runID != "" && r.RunID != t.runID {
		return s // the fold fails: the run counts in the runs gauge only
	}
	for name, m := range t.done {
		for st, n := range m {
			count(s.activities, name, st, n)
		}
		for o, n := range t.doneTry[name] {
			count(s.attempts, name, o, n)
		}
	}
	for _, a := range t.acts {
		count(s.activities, a.name, a.status, 1)
		for o, n := range a.closed {
			count(s.attempts, a.name, o, n)
		}
		for _, tr := range a.tries {
			count(s.attempts, a.name, tr.outcome, 1)
		}
	}
	for cat, n := range t.failures {
		s.failures[cat] = n
	}
	s.nonRetryable = t.nonRetry
	if r.Open() {
		for _, a := range t.acts {
			switch a.status {
			case runview.ActivityRetrying:
				s.backlog.RetryingActivities++
				s.backlog.PendingActivities++
			case runview.ActivityScheduled, runview.ActivityRunning:
				s.backlog.PendingActivities++
			}
		}
		s.backlog.PendingTimers, s.signals = t.nTimers, t.nSignals
	}
	for _, l := range t.shape.leafs() {
		status, d, done := t.row(l)
		s.steps[status]++
		if d > 0 || done {
			h := s.latency[l.Kind]
			if h == nil {
				h = &stepHist{}
				s.latency[l.Kind] = h
			}
			h.observe(d.Seconds())
		}
	}
	return s
}
