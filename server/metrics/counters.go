package metrics

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/wendflow/wend/history"
)

// purgeFeed is a change feed that tells purges from commits (boltstore): the counters see
// every commit as it passes and learn from the feed only what went without one.
type purgeFeed interface {
	changeFeed
	PurgedRuns(since uint64) (ids []string, now uint64, complete bool)
}

// counters keep the metrics' sum up to date from the commits that pass TimeCommits' store, so
// a scrape reads no run: it sums what the commits since the last scrape brought, from memory,
// takes off the runs the feed says were purged, and keeps the sum and the changed runs'
// summaries in the store at the feed's position (Keep, in the store's open transaction).
//
// What a commit costs is an append to its runs' state under a lock. A run's state holds the
// events this process saw it commit (its whole history, so its summary is folded exactly as a
// whole read folds it) and its summary; it is dropped once the run is closed and summed, or
// when more than heldMax runs are held and the run is among those committed longest ago. A
// run whose state is not held (open across a restart, dropped, or after a failed commit) has
// its history read once, at its next commit, never at a scrape.
//
// After a crash the store holds the sum kept at the last checkpoint, at its position: a new
// process's TimeCommits reads the runs the feed names after that position (and those whose
// commits were under way when it was kept) before the first commit, as refresh does (sums.go).
type counters struct {
	ss *summaries    // the sum and its position; ss.mu makes scrapes one at a time
	st history.Store // the store whose commits pass: a run's history is read from it lazily
	fd purgeFeed     // the same store's feed
	kp runKeeper     // the same store's keeper
	mu sync.Mutex    // guards runs, dirty and inflight; commits hold it briefly

	runs     map[string]*runState
	dirty    []string       // runs committed since the last scrape, in order
	inflight map[string]int // commits under way, by run
	settling bool           // a settleAside is under way
	commits  uint64         // runs' commits counted, to tell the runs committed longest ago
	// pending are summaries the store failed to keep (nil: the run's is to be deleted), kept
	// with the next scrape's; only a scrape (under ss.mu) touches them.
	pending map[string][]byte
}

// runState is what the counters hold for one run committed in this process.
type runState struct {
	run    history.Run
	events []history.Event
	whole  bool // events are the run's whole history
	dirty  bool // committed since its summary was made
	// summary is the run's in the sum, as of its last scrape (only scrapes touch it); nil:
	// the one the store keeps, if any.
	summary packedSummary
	last    uint64 // the counters' commit count at the run's last commit
}

// newCounters catches the sum up with st, reading the runs changed since it was kept, and
// returns the counters over it; nil when st keeps no feed or summaries, or the catch-up
// failed: each scrape then reads the runs changed since the previous one (sums.go).
func newCounters(ss *summaries, st history.Store) *counters {
	fd, ok := st.(purgeFeed)
	kp, keeps := st.(runKeeper)
	if !ok || !keeps {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if err := ss.refresh(st); err != nil || ss.keepFailed {
		return nil
	}
	return &counters{ss: ss, st: st, fd: fd, kp: kp, runs: map[string]*runState{}, inflight: map[string]int{}}
}

// begin notes c's runs as under way, before the store commits c.
func (k *counters) begin(c history.Commit) {
	k.mu.Lock()
	for i := range c.Runs {
		k.inflight[c.Runs[i].Run.RunID]++
	}
	k.mu.Unlock()
}

// end adds c's events to its runs' state once the store answered c (err), and ends what begin
// began.
func (k *counters) end(c history.Commit, err error) {
	var load []string
	k.mu.Lock()
	for i := range c.Runs {
		u := &c.Runs[i]
		id := u.Run.RunID
		s := k.runs[id]
		switch {
		case s == nil && err != nil:
			continue
		case s == nil: // whole when c has its first event; else its history is read below
			s = &runState{whole: len(u.Events) > 0 && u.Events[0].Seq == 1}
			k.runs[id] = s
		}
		switch {
		case err != nil:
			// What the store kept of c is not known: the run's history is read at its next commit.
			s.whole, s.events = false, nil
			continue
		case !s.whole:
		case len(u.Events) > 0 && u.Events[0].Seq != lastSeqOf(s.events)+1:
			s.whole, s.events = false, nil // not seen from its first event, or a gap
		default:
			s.events = append(s.events, u.Events...)
		}
		k.commits++
		s.run, s.last = u.Run, k.commits
		k.touch(id, s)
		if !s.whole {
			load = append(load, id)
		}
	}
	if len(load) > 0 {
		k.mu.Unlock()
		for _, id := range load {
			evs, rerr := k.st.Events(id, 0)
			k.mu.Lock()
			if s := k.runs[id]; s != nil && !s.whole && rerr == nil {
				s.events, s.whole = evs, true
				k.touch(id, s)
			}
			k.mu.Unlock()
		}
		k.mu.Lock()
	}
	for i := range c.Runs {
		id := c.Runs[i].Run.RunID
		if k.inflight[id]--; k.inflight[id] <= 0 {
			delete(k.inflight, id)
		}
	}
	if len(k.dirty) >= settleAfter && !k.settling {
		k.settling = true
		go k.settleAside()
	}
	k.mu.Unlock()
}

// settleAfter is how many runs committed since the last scrape make the counters settle by
// themselves, aside from the commits: the closed runs' states then go even when nothing
// scrapes, and a scrape has at most about that many to sum.
const settleAfter = 1024

// settleAside settles the counters as a scrape does, in a goroutine of its own.
func (k *counters) settleAside() {
	k.ss.mu.Lock()
	_ = k.settle() // a store that failed: the next scrape says so
	k.ss.mu.Unlock()
	k.mu.Lock()
	k.settling = false
	k.mu.Unlock()
}

// touch marks s dirty; k.mu is held.
func (k *counters) touch(id string, s *runState) {
	if !s.dirty {
		s.dirty = true
		k.dirty = append(k.dirty, id)
	}
}

func lastSeqOf(evs []history.Event) uint64 {
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

// settle brings the sum up to date with the commits and purges since the last call and keeps
// it in the store; ss.mu is held. It reads no run, unless the feed forgot purges since the
// last call (more than it remembers): then every run is read once, as a first scrape does.
func (k *counters) settle() error {
	ss := k.ss
	type item struct {
		id     string
		s      *runState
		run    history.Run
		events []history.Event
		whole  bool
	}
	k.mu.Lock()
	gone, pos, complete := k.fd.PurgedRuns(ss.since)
	if !complete {
		k.mu.Unlock()
		return k.rebuild()
	}
	work := make([]item, 0, len(k.dirty))
	for _, id := range k.dirty {
		s := k.runs[id]
		if s == nil || !s.dirty {
			continue
		}
		s.dirty = false
		work = append(work, item{id: id, s: s, run: s.run, events: s.events[:len(s.events):len(s.events)], whole: s.whole})
	}
	k.dirty = k.dirty[:0]
	unsettled := slices.Sorted(maps.Keys(k.inflight))
	k.mu.Unlock()

	// The summaries in the sum of the runs that changed, where this process does not hold them.
	var need []string
	for _, it := range work {
		if it.s.summary == nil {
			need = append(need, it.id)
		}
	}
	need = append(need, gone...)
	kept := map[string][]byte{}
	if len(need) > 0 {
		if _, _, runs, ok, err := k.kp.Kept(keptName, need); ok && err == nil {
			kept = runs
		}
	}
	changed := k.pending
	if changed == nil {
		changed = map[string][]byte{}
	}
	k.pending = nil
	old := func(id string, s *runState) packedSummary {
		if s != nil && s.summary != nil {
			return s.summary
		}
		if p, ok := changed[id]; ok {
			return p
		}
		return kept[id]
	}
	for _, it := range work {
		s := newRunSummary()
		s.name, s.status, s.lastSeq = it.run.Name, it.run.Status, it.run.LastSeq
		if it.whole {
			if sum, err := summarize(it.run, it.events); err == nil {
				s = sum
			}
		}
		ss.sum.takeOff(old(it.id, it.s))
		ss.sum.add(s, 1)
		p := pack(s)
		it.s.summary, changed[it.id] = p, p
	}
	for _, id := range gone {
		k.mu.Lock()
		s := k.runs[id]
		delete(k.runs, id)
		k.mu.Unlock()
		ss.sum.takeOff(old(id, s))
		changed[id] = nil
	}
	ss.since = pos
	if len(changed) > 0 && k.kp.Keep(keptName, pos, packTotals(ss.sum, unsettled), changed, false) != nil {
		k.pending = changed // kept with the next scrape's, at its position
	}
	// A closed run's summary now lives in the store (or in pending): its state goes. So do
	// the states of the open runs committed longest ago beyond heldMax: a run's next commit
	// reads its history again.
	k.mu.Lock()
	for _, it := range work {
		if !it.run.Open() && !it.s.dirty && k.inflight[it.id] == 0 && k.runs[it.id] == it.s {
			delete(k.runs, it.id)
		}
	}
	if len(k.runs) > heldMax {
		k.dropOldest(len(k.runs) - heldMax)
	}
	k.mu.Unlock()
	return nil
}

// heldMax bounds the runs whose state (their events) the counters hold, as the engine bounds
// the runs it holds: 10,000 histories of open runs, the ones committed last.
var heldMax = 10_000

// dropOldest drops the states of up to n runs summed and not committed since, those whose last
// commit is oldest first; k.mu is held.
func (k *counters) dropOldest(n int) {
	type held struct {
		id   string
		last uint64
	}
	var idle []held
	for id, s := range k.runs {
		if !s.dirty && s.summary != nil && k.inflight[id] == 0 {
			idle = append(idle, held{id, s.last})
		}
	}
	slices.SortFunc(idle, func(a, b held) int { return cmp.Compare(a.last, b.last) })
	for _, h := range idle[:min(n, len(idle))] {
		delete(k.runs, h.id)
	}
}

// rebuild reads every run again, when the feed forgot the purges since the last scrape, and
// keeps the new summaries in place of the old; ss.mu is held.
func (k *counters) rebuild() error {
	ss := k.ss
	_, now, _ := k.fd.ChangedRuns(^uint64(0))
	sum := ss.sum
	ss.runs, ss.sum = map[string]packedSummary{}, newTotals()
	if err := ss.readAll(k.st); err != nil {
		ss.runs, ss.sum = map[string]packedSummary{}, sum // as it was: the next scrape tries again
		return err
	}
	k.mu.Lock()
	for _, s := range k.runs {
		s.summary = nil // the whole read's is in the sum
	}
	k.mu.Unlock()
	k.pending = nil
	ss.since = now
	ss.keepAll(k.kp)
	if ss.keepFailed { // held in ss.runs: kept with the next scrape's
		k.pending = make(map[string][]byte, len(ss.runs))
		for id, p := range ss.runs {
			k.pending[id] = p
		}
		ss.runs, ss.keepFailed = map[string]packedSummary{}, false
	}
	return nil
}

// Keep brings the counters' sum up to date and keeps it in the store, as a scrape does: call
// it before the store closes, so the next process reads no run to catch up.
func (m *Metrics) Keep() {
	m.mu.Lock()
	k := m.counters
	m.mu.Unlock()
	if k == nil {
		return
	}
	k.ss.mu.Lock()
	defer k.ss.mu.Unlock()
	_ = k.settle() // what is not kept is read again by the next process
}

// takeOff takes the packed summary p off t (nothing for nil).
func (t *totals) takeOff(p packedSummary) {
	if p == nil {
		return
	}
	if s, err := p.unpack(); err == nil {
		t.add(s, -1)
	}
}
