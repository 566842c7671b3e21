package metrics

import (
	"sync"

	"github.com/wendflow/wend/history"
)

// runState is what the counters hold for one run committed in this process: a tally of its
// history (tally.go) and the events committed since the last settle, which a settle folds
// into it; or, where a tally cannot serve, the whole history, which a settle folds whole
// (summarize): an open run whose spec waits for signals (their waits need a replay of the
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
	s.whole, s.seq, s.t, s.events, s.evSize = false, 0, nil, nil, 0
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
func (s *runState) hold(evs []history.Event) {
	s.reset(evs)
	s.t = nil
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
			s.t = nil // the first event: events are the whole history
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
	s.mu.Lock()
	if !s.fold(shapes) {
		if evs, err := st.Events(id, 0); err == nil {
			s.hold(evs)
			s.lost = true
		} else {
			s.forget()
		}
	}
	whole, t, evs := s.whole, s.t, s.events[:len(s.events):len(s.events)]
	var sum *runSummary
	if whole && t != nil {
		sum = t.summary(r)
	}
	s.mu.Unlock()
	if sum != nil {
		return sum
	}
	if whole {
		if sum, err := summarize(r, evs); err == nil {
			return sum
		}
	}
	sum = newRunSummary()
	sum.name, sum.status, sum.lastSeq = r.Name, r.Status, r.LastSeq
	return sum
}
