package runview

import (
	"regexp"
	"slices"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Step statuses of the step tree. A step's history is its events (those whose step is the
// step's path or, inside a for_each, one of its instances' paths); the history has no
// "step started" event, so a step with no events is StepNone: not reached yet, skipped by
// its `if`, or one that records nothing (a `set`).
const (
	StepNone      = "none"
	StepRunning   = "running"
	StepRetrying  = "retrying"
	StepWaiting   = "waiting"
	StepCompleted = "completed"
	StepFailed    = "failed"
	StepCancelled = "cancelled"
	// StepCaught: the step failed and its catch ran (whatever the catch did is its own rows').
	StepCaught = "caught"
)

// Step is one step of a run's step tree, flattened in spec order with its depth.
type Step struct {
	Depth     int
	Path      string // positional, for machines
	Name      string // for a person: StepName with the spec's ids
	ID        string
	Kind      string
	Detail    string // plugin.activity, signal name, child workflow...
	Status    string
	Start     time.Time // first event of the step (of any instance)
	End       time.Time // last event, once the step is finished
	Instances int       // for_each instances with events (0 outside a loop)
	// Compensation is the status of the step's compensation, if one ran.
	Compensation string
	// Error is the failure that ended the step (caught or not), or the last try's while it
	// retries; "" for a step that completed, whatever its earlier tries met.
	Error string
}

// Duration is End-Start for a finished step, else 0.
func (r Step) Duration() time.Duration {
	if r.End.IsZero() || r.Start.IsZero() {
		return 0
	}
	return r.End.Sub(r.Start)
}

// Leaf reports whether the step does the work itself rather than through child steps.
func (r Step) Leaf() bool { return LeafKind(spec.Kind(r.Kind)) }

// LeafKind reports whether a step of kind k does the work itself rather than through child
// steps (steps, parallel and for_each do not).
func LeafKind(k spec.Kind) bool {
	switch k {
	case spec.KindSteps, spec.KindParallel, spec.KindForEach:
		return false
	}
	return true
}

// StepDone reports whether a step status is final.
func StepDone(status string) bool {
	return status == StepCompleted || status == StepFailed || status == StepCancelled || status == StepCaught
}

// instanceMark is the "@N" a for_each instance adds to the paths of its steps.
var instanceMark = regexp.MustCompile(`@\d+`)

// StaticPath is a step instance's path without its for_each item numbers: the step's path in
// the spec (steps[1]@4.steps[0] is steps[1].steps[0]).
func StaticPath(path string) string { return history.StaticStepPath(path) }

// stepEvents holds, per static step path and instance path, what the step's events say.
type stepEvents map[string]map[string]*stepState

// stepState folds the events of one step instance.
type stepState struct {
	status       string
	start, end   time.Time
	compensation string
	err          string
}

// fold applies one event to its step's instance; failure is the message of a failure the
// event recorded, "" when none.
func (se stepEvents) fold(ev history.Event, failure string) {
	if ev.Step == "" || ev.Type == history.WorkflowStarted {
		return
	}
	se.instance(ev.Step).fold(ev, failure)
}

func (se stepEvents) instance(path string) *stepState {
	static := StaticPath(path)
	m := se[static]
	if m == nil {
		m = map[string]*stepState{}
		se[static] = m
	}
	s := m[path]
	if s == nil {
		s = &stepState{}
		m[path] = s
	}
	return s
}

// fold applies one event. Once an instance is finished only a failure changes it (a step
// whose timer fired can still fail): a later timer cancel or late event is bookkeeping.
func (st *stepState) fold(ev history.Event, failure string) {
	if st.start.IsZero() {
		st.start = ev.Time
	}
	next := ""
	switch ev.Type {
	case history.ActivityScheduled, history.ActivityStarted, history.ChildWorkflowScheduled, history.WorkflowWaitScheduled:
		next = StepRunning
	case history.ActivityRetryScheduled:
		next = StepRetrying
	case history.TimerScheduled:
		next = StepWaiting
	case history.ActivityCompleted, history.TimerFired, history.SignalApplied, history.ChildWorkflowCompleted, history.WorkflowWaitCompleted:
		next = StepCompleted
	case history.ActivityFailed, history.StepFailed, history.ChildWorkflowFailed, history.WorkflowWaitFailed:
		next = StepFailed
	case history.ActivityCancelled:
		next = StepCancelled
	case history.TimerCancelled:
		if st.status == StepWaiting {
			next = StepCancelled
		}
	case history.CompensationStarted:
		st.compensation = CompensationStarted
	case history.CompensationCompleted:
		st.compensation = CompensationCompleted
	case history.CompensationFailed:
		st.compensation = CompensationFailed
	}
	if failure != "" && ev.Type != history.CompensationFailed {
		st.err = failure
	}
	if next == "" || (StepDone(st.status) && next != StepFailed) {
		return
	}
	st.status = next
	if StepDone(next) {
		st.end = ev.Time
	}
	if next == StepCompleted {
		st.err = "" // an earlier try's error is the attempts' story, not the step's
	}
}

// Steps lays the run's spec out as rows, each with the status and timing its events give
// (and, for an open run, the signal waits a replay finds: a wait records no event when it
// begins). It needs the spec text the run recorded; nil when that no longer loads, as a
// damaged run still deserves the rest of its page.
func (v *View) Steps() []Step {
	w := v.Spec()
	if w == nil {
		return nil
	}
	inst := stepEvents{}
	for static, m := range v.steps {
		inst[static] = map[string]*stepState{}
		for path, s := range m {
			c := *s
			inst[static][path] = &c
		}
	}
	open := v.Open()
	if open {
		for _, w := range v.Live().SignalWaits {
			s := inst.instance(w.Step)
			if !StepDone(s.status) {
				*s = stepState{status: StepWaiting, start: w.Since}
			}
		}
	}
	t := &stepTree{inst: inst, open: open, ids: v.StepIDs()}
	t.add(w.Steps, 0)
	if len(w.OnCancel) > 0 {
		t.add(w.OnCancel, 0)
	}
	return t.rows
}

type stepTree struct {
	ids  map[string]string // step path -> id, for row names
	inst stepEvents
	open bool
	rows []Step
}

// add appends steps and their descendants, and returns their rows' statuses.
func (t *stepTree) add(steps []*spec.Step, depth int) []string {
	var statuses []string
	for _, s := range steps {
		i := len(t.rows)
		t.rows = append(t.rows, Step{Depth: depth, Path: s.Path, Name: StepName(s.Path, t.ids), ID: s.ID, Kind: string(s.Kind), Detail: detailOf(s)})
		var kids, catchOut []string
		catchAt := 0
		for g, group := range [][]*spec.Step{s.Steps, s.Parallel, s.Catch, s.CompensateWith} {
			at := len(t.rows)
			st := t.add(group, depth+1)
			if g == 2 {
				catchAt, catchOut = at, st
			}
			kids = append(kids, st...)
		}
		row := &t.rows[i]
		t.own(row)
		// A failure of a step with a catch always runs the catch (the interpreter's fail), so
		// the step is caught even when its catch records nothing (`catch: {steps: [], set: …}`).
		caught := row.Status == StepFailed && len(s.Catch) > 0
		if !row.Leaf() {
			row.Status = t.aggregate(row.Status, kids)
			for _, k := range t.rows[i+1:] {
				if row.Start.IsZero() || (!k.Start.IsZero() && k.Start.Before(row.Start)) {
					row.Start = k.Start
				}
				if k.End.After(row.End) {
					row.End = k.End
				}
			}
			if !StepDone(row.Status) {
				row.End = time.Time{}
			}
		}
		if caught {
			row.Status = StepCaught
			// For its parent the step ends as its catch does: handled, as a completed step,
			// unless the catch failed or is still going.
			statuses = append(statuses, t.settleCatch(s.Catch, catchAt, depth+1, catchOut))
			continue
		}
		statuses = append(statuses, row.Status)
	}
	return statuses
}

// settleCatch marks the catch steps of a caught step that record nothing (a `set`, an empty
// `steps`) completed once every catch step before them completed: they ran, but no event says
// so. It returns the catch's outcome as its parent sees it. at is the first catch row.
func (t *stepTree) settleCatch(catch []*spec.Step, at, depth int, statuses []string) string {
	statuses = slices.Clone(statuses)
	reached := true
	j := at
	for k, c := range catch {
		for j < len(t.rows) && (t.rows[j].Depth != depth || t.rows[j].Path != c.Path) {
			j++
		}
		if j == len(t.rows) || k >= len(statuses) {
			break
		}
		if reached && statuses[k] == StepNone && recordsNothing(c) {
			statuses[k] = StepCompleted
			for d := j; d < len(t.rows) && (d == j || t.rows[d].Depth > depth); d++ {
				t.rows[d].Status = StepCompleted
			}
		}
		reached = reached && statuses[k] == StepCompleted
	}
	switch out := worstStatus(statuses); out {
	case StepNone, StepCompleted:
		return StepCompleted
	default:
		return out
	}
}

// recordsNothing reports whether a step and its descendants write no event when they run:
// a `set` (a steps with no children) or sequences and parallels of such.
func recordsNothing(s *spec.Step) bool {
	if s.Kind != spec.KindSteps && s.Kind != spec.KindParallel {
		return false
	}
	if s.If != nil {
		return false // skipped or run: the history cannot tell
	}
	for _, k := range append(slices.Clone(s.Steps), s.Parallel...) {
		if !recordsNothing(k) {
			return false
		}
	}
	return true
}

// own fills a row from the step's own events, across its for_each instances.
func (t *stepTree) own(row *Step) {
	row.Status = StepNone
	m := t.inst[row.Path]
	if len(m) == 0 {
		return
	}
	if len(m) > 1 || instanceMark.MatchString(anyInstance(m)) {
		row.Instances = len(m)
	}
	var statuses []string
	allDone := true
	for _, s := range m {
		if s.status == "" {
			s.status = StepRunning // events, none that says how far: it has begun
		}
		statuses = append(statuses, s.status)
		if row.Start.IsZero() || s.start.Before(row.Start) {
			row.Start = s.start
		}
		if !StepDone(s.status) {
			allDone = false
		} else if s.end.After(row.End) {
			row.End = s.end
		}
		row.Compensation = first(row.Compensation, s.compensation)
		row.Error = first(row.Error, s.err)
	}
	row.Status = worstStatus(statuses)
	if !allDone {
		row.End = time.Time{}
	}
}

// aggregate is a composite step's status from its own and its children's statuses.
func (t *stepTree) aggregate(own string, kids []string) string {
	if own == StepFailed || own == StepCancelled {
		return own
	}
	s := worstStatus(kids)
	if s == StepCompleted && t.open {
		for _, k := range kids {
			if k == StepNone {
				return StepRunning // some children done, others not reached yet
			}
		}
	}
	return s
}

// statusRank orders statuses by what an operator must see first.
var statusRank = map[string]int{StepFailed: 7, StepRetrying: 6, StepWaiting: 5, StepRunning: 4, StepCancelled: 3, StepCaught: 2, StepCompleted: 1, StepNone: 0}

func worstStatus(statuses []string) string {
	out, n := StepNone, -1
	for _, s := range statuses {
		if statusRank[s] > n {
			out, n = s, statusRank[s]
		}
	}
	return out
}

func anyInstance(m map[string]*stepState) string {
	for k := range m {
		return k
	}
	return ""
}

// detailOf names what a step does, for the tree's detail column.
func detailOf(s *spec.Step) string {
	switch s.Kind {
	case spec.KindActivity:
		return s.Plugin + "." + s.Activity
	case spec.KindWaitForSignal:
		return "signal " + s.Signal
	case spec.KindRunWorkflow:
		return s.RunWorkflow
	case spec.KindDelay:
		if s.Delay.D > 0 {
			return s.Delay.D.String()
		}
	}
	return ""
}
