package metrics

import (
	"sync"

	"github.com/wendflow/wend/history"
)

// runState is what the counters hold for one run committed in this process: a tally of its
// history (tally.go) and the events committed since the last settle, which a settle folds
// into it; or, where a tally cannot serve, the whole history, which a settle folds whole
// (summarize): a run whose spec waits for signals (an open one's waits need a replay of the
// history, runview.Live, and a scrape reads no run), or a history the tally cannot follow.
type runState struct {
	run   runRecord
	dirty bool   // committed since its summary was made
	last  uint64 // the counters' commit count at the run's last commit
	bytes int    // what it adds to counters.held
	// summary is the run's in the sum, as of its last scrape (only scrapes touch it); nil:
	// the one the store keeps, if any.
	summary packedSummary

	mu     sync.Mutex // guards what follows: commits add under it, settles fold under it
	whole  bool       // t and events go back to the run's first event
	seq    uint64     // the last event taken
	t      *tally     // the events folded; nil: events are the whole history
	events []history.Event
	evSize int  // about what events hold
	lost   bool // the tally could not follow the history: it is held whole
	folded int  // events folded into tallies (the work its settles did)
	// text, when set, holds the spec text taken out of the held WorkflowStarted's payload.
	text *shape
}

// runRecord is what a summary takes of a run's record (the rest of it is not held).
type runRecord struct {
	runID, name, status string
	lastSeq             uint64
}

func recordOf(r history.Run) runRecord {
	return runRecord{runID: r.RunID, name: r.Name, status: r.Status, lastSeq: r.LastSeq}
}

func (r runRecord) record() history.Run {
	return history.Run{RunID: r.runID, Name: r.name, Status: r.status, LastSeq: r.lastSeq}
}

// eventBytes is about what a held event costs besides its payload and strings.
const eventBytes = 120

func eventSize(ev history.Event) int {
	return eventBytes + len(ev.Data) + len(ev.Step) + len(ev.ActivityExecutionID)
}

// size is about what the state holds; s.mu is held.
func (s *runState) size() int {
	if s.t != nil {
		return s.t.bytes + s.evSize
	}
	return s.evSize
}

// forget drops what the state holds: the history is read again at the run's commit; s.mu is held.
func (s *runState) forget() {
	s.whole, s.seq, s.t, s.events, s.evSize, s.text = false, 0, nil, nil, 0, nil
}

// add takes a commit's events; true when the run's history must be read (reset); s.mu is held.
func (s *runState) add(evs []history.Event) (load bool) {
	if !s.whole {
		return true
	}
	for _, ev := range evs {
		switch {
		case ev.Seq <= s.seq:
			continue // read with the history already
		case ev.Seq != s.seq+1:
			s.forget() // a gap: a commit that ended before an earlier one
			return true
		}
		s.seq = ev.Seq
		s.events = append(s.events, ev)
		s.evSize += eventSize(ev)
	}
	return false
}

// reset starts the state over from the run's whole history, which the next settle folds;
// s.mu is held.
func (s *runState) reset(evs []history.Event) {
	s.forget()
	s.whole, s.t, s.events, s.lost = true, newTally(), evs, false
	for _, ev := range evs {
		s.seq = ev.Seq
		s.evSize += eventSize(ev)
	}
}

// hold makes the state the run's whole history, held as it is; s.mu is held.
func (s *runState) hold(evs []history.Event, shapes *shapeCache) {
	s.reset(evs)
	s.t = nil
	if len(evs) > 0 && evs[0].Type == history.WorkflowStarted {
		if st, err := history.DataOf[history.Started](evs[0]); err == nil {
			s.compact(shapes.of(st.SpecFile, st.SpecSource))
		}
	}
}

// compact takes the spec text out of the held WorkflowStarted's payload, as the runs of a spec
// share it in sh: a run waiting on a signal holds its few events, not its workflow's text;
// s.mu is held.
func (s *runState) compact(sh *shape) {
	if sh == nil || len(s.events) == 0 || s.events[0].Type != history.WorkflowStarted {
		return
	}
	st, err := history.DataOf[history.Started](s.events[0])
	if err != nil || st.SpecSource == "" || st.SpecSource != sh.source || st.SpecFile != sh.file {
		return
	}
	st.SpecSource = ""
	ev := s.events[0]
	ev.Data = history.MustData(st)
	s.evSize += len(ev.Data) - len(s.events[0].Data)
	s.events[0], s.text = ev, sh
}

// held is the history held, its WorkflowStarted's payload as recorded (the spec text put
// back); s.mu is held.
func (s *runState) held() []history.Event {
	evs := s.events[:len(s.events):len(s.events)]
	if s.text == nil {
		return evs
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return evs // it was made from one that decodes
	}
	st.SpecSource = s.text.source
	ev := evs[0]
	ev.Data = history.MustData(st)
	return append([]history.Event{ev}, evs[1:]...)
}

// fold folds the events taken since the last call into the tally; false when the tally
// cannot follow them, and the whole history must be held. The events of a spec that waits for
// signals are held from its first on; s.mu is held.
func (s *runState) fold(shapes *shapeCache) bool {
	if s.t == nil || !s.whole {
		return true
	}
	for _, ev := range s.events {
		if !s.t.fold(ev, shapes) {
			return false
		}
		s.folded++
		if ev.Type == history.WorkflowStarted && s.t.shape != nil && s.t.shape.signals {
			sh := s.t.shape
			s.t = nil // the first event: events are the whole history
			s.compact(sh)
			return true
		}
	}
	s.events, s.evSize = nil, 0
	return true
}

// summarize folds what the run's commits brought since the last call and returns its summary:
// the tally's, or a fold of the history held; only the runs gauge counts a run whose history
// could not be read. A tally that cannot follow the history has the history read from st,
// and held: only for histories the interpreter does not write. ss.mu is held.
func (s *runState) summarize(id string, r history.Run, st history.Store, shapes *shapeCache) *runSummary {
	sum, evs, whole := s.settle(id, r, st, shapes)
	if sum != nil {
		return sum
	}
	if whole {
		if sum, err := summarize(r, evs, &shapes.specs); err == nil {
			return sum
		}
	}
	sum = newRunSummary()
	sum.name, sum.status, sum.lastSeq = r.Name, r.Status, r.LastSeq
	return sum
}

// settle folds the events taken since the last call and returns the tally's summary, or the
// history held; whole is false when neither is held.
func (s *runState) settle(id string, r history.Run, st history.Store, shapes *shapeCache) (sum *runSummary, evs []history.Event, whole bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fold(shapes) {
		if evs, err := st.Events(id, 0); err == nil {
			s.hold(evs, shapes)
			s.lost = true
		} else {
			s.forget()
		}
	}
	switch {
	case !s.whole:
		return nil, nil, false
	case s.t != nil:
		return s.t.summary(r), nil, true
	}
	return nil, s.held(), true
}
