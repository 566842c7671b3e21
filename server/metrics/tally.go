package metrics

import (
	"encoding/json"
	"time"

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

	timers   map[string]string // pending timer id -> its step
	nTimers  int               // timer schedulings pending (a rescheduled id leaves one behind)
	signals  map[uint64]bool   // received seqs not applied
	nSignals int

	steps   map[string]uint8        // step instance path -> status (index in stepStatuses)
	statics map[string]*staticSteps // static step path -> its instances' sums

	bytes int // about what the tally holds, for the counters' bound
}

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
		s, ok := t.timers[ref.TimerID]
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
		if _, ok := t.timers[ts.TimerID]; !ok {
			t.bytes += entryBytes + len(ts.TimerID) + len(ev.Step)
		}
		put(&t.timers, ts.TimerID, ev.Step)
		t.nTimers++
		return true
	case history.TimerFired, history.TimerCancelled:
		ref, err := history.DataOf[history.TimerRef](ev)
		if err != nil {
			return false
		}
		if step, ok := t.timers[ref.TimerID]; ok {
			delete(t.timers, ref.TimerID)
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
		c, err := history.DataOf[history.Closed](ev)
		if err != nil {
			return false
		}
		if c.Failure != nil {
			t.failure(*c.Failure)
		}
		return true
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
		c, err := history.DataOf[history.Closed](ev)
		if err != nil {
			return false
		}
		if c.Failure != nil {
			t.failure(*c.Failure)
		}
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

// step folds ev into its step instance, as runview's stepState.fold does; false when the
// latest end of the static path's finished instances is no longer known.
func (t *tally) step(path string, ev history.Event) bool {
	static := runview.StaticPath(path)
	ss := t.statics[static]
	if ss == nil {
		ss = &staticSteps{start: ev.Time}
		put(&t.statics, static, ss)
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

// stepRank orders statuses by what an operator must see first, as runview's step tree does.
var stepRank = map[string]int{runview.StepFailed: 7, runview.StepRetrying: 6, runview.StepWaiting: 5, runview.StepRunning: 4,
	runview.StepCancelled: 3, runview.StepCaught: 2, runview.StepCompleted: 1, runview.StepNone: 0}

// row is a leaf step's row as runview's step tree makes it: its status, its duration, and
// whether it is finished with an end (what the latency histogram takes).
func (t *tally) row(l runview.LeafStep) (status string, d time.Duration, ended bool) {
	ss := t.statics[l.Path]
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
