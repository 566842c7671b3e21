package metrics

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

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
// What a commit costs is an append of its events to its runs' state under a lock; a settle
// folds them into the run's tally (runstate.go, tally.go), each event once, so a scrape costs
// what the runs' commits since the last one brought, not their length. A state is dropped
// once its run is closed and summed, or when more than heldMax runs or heldBytesMax bytes are
// held, the runs committed longest ago first. A run whose state is not held (open across a
// restart, dropped, or after a failed commit) has its history read once, at its next commit,
// never at a scrape (but for a history the tally cannot follow, which the interpreter does
// not write: runState.summarize).
//
// After a crash the store holds the sum kept at the last checkpoint, at its position: a new
// process's TimeCommits reads the runs the feed names after that position (and those whose
// commits were under way when it was kept) before the first commit, as refresh does (sums.go).
type counters struct {
	ss *summaries    // the sum and its position; ss.mu makes scrapes one at a time
	st history.Store // the store whose commits pass: a run's history is read from it lazily
	fd purgeFeed     // the same store's feed
	kp runKeeper     // the same store's keeper
	mu sync.Mutex    // guards runs, dirty, inflight, held and the states' run, dirty, last, bytes

	runs     map[string]*runState
	dirty    []string       // runs committed since the last scrape, in order
	inflight map[string]int // commits under way, by run
	settling bool           // a settleAside is under way
	commits  uint64         // runs' commits counted, to tell the runs committed longest ago
	held     int            // about the bytes the states hold
	heldThen int            // held after the last settle
	shapes   shapeCache
	lost     atomic.Int64  // settles of runs whose history a tally could not follow
	catching atomic.Bool   // the background read of every run is under way (catchUp)
	off      atomic.Bool   // that read failed or was stopped: commits are not counted
	caughtUp chan struct{} // closed once the first catch-up ended (nil: it was made at once)
	// pending are summaries the store failed to keep (nil: the run's is to be deleted), kept
	// with the next scrape's; only a scrape (under ss.mu) touches them.
	pending map[string][]byte
}

// newCounters catches the sum up with st, reading the runs changed since it was kept, and
// returns the counters over it; nil when st keeps no feed or summaries, or the catch-up
// failed: each scrape then reads the runs changed since the previous one (sums.go).
//
// When nothing usable was kept (a database an older wend wrote, or one whose feed forgot
// changes since the kept position), the catch-up is a read of every run's history: seconds
// over 100,000 runs. That read runs in the background (catchUp), so a server is ready at once;
// commits pass meanwhile and are counted as ever, since a settle replaces a run's summary
// rather than adding to it.
func newCounters(ss *summaries, st history.Store) *counters {
	fd, ok := st.(purgeFeed)
	kp, keeps := st.(runKeeper)
	if !ok || !keeps {
		return nil
	}
	k := &counters{ss: ss, st: st, fd: fd, kp: kp, runs: map[string]*runState{}, inflight: map[string]int{}}
	ss.mu.Lock()
	if ss.wholeReadAhead(st) {
		k.catching.Store(true)
		k.caughtUp = make(chan struct{})
		go k.catchUp() // releases ss.mu
		return k
	}
	defer ss.mu.Unlock()
	if err := ss.refresh(st); err != nil || ss.keepFailed {
		return nil
	}
	return k
}

// catchUp reads every run into the sum, with ss.mu held (taken by newCounters), and releases
// it. Scrapes meanwhile answer without the run-derived families (catchingUp). A failed or
// stopped catch-up turns the counters off: scrapes then read the changed runs themselves, as
// without counters, and the next process starts the catch-up again (nothing partial is kept).
func (k *counters) catchUp() {
	defer close(k.caughtUp)
	defer k.ss.mu.Unlock()
	if err := k.ss.refresh(k.st); err != nil || k.ss.keepFailed {
		k.off.Store(true)
		k.ss.runs, k.ss.sum, k.ss.ready = map[string]packedSummary{}, newTotals(), false
	}
	k.catching.Store(false)
}

// catchingUp says whether the background read of every run is still under way.
func (k *counters) catchingUp() bool { return k != nil && k.catching.Load() }

// active is k when it counts commits, nil when there are none or they were turned off.
func (k *counters) active() *counters {
	if k == nil || k.off.Load() {
		return nil
	}
	return k
}

// begin notes c's runs as under way, before the store commits c.
func (k *counters) begin(c history.Commit) {
	k.mu.Lock()
	for i := range c.Runs {
		k.inflight[c.Runs[i].Run.RunID]++
	}
	k.mu.Unlock()
}

// end adds c's events to its runs' state once the store answered c (err), and ends what
// begin began.
func (k *counters) end(c history.Commit, err error) {
	type taken struct {
		s    *runState
		size int // what s holds after c
	}
	var buf [4]taken
	states := buf[:0]
	k.mu.Lock()
	for i := range c.Runs {
		u := &c.Runs[i]
		s := k.runs[u.Run.RunID]
		if s == nil && err == nil { // whole when c has its first event; else its history is read below
			s = &runState{}
			if len(u.Events) > 0 && u.Events[0].Seq == 1 {
				s.reset(nil)
			}
			k.runs[u.Run.RunID] = s
		}
		states = append(states, taken{s: s})
	}
	k.mu.Unlock()
	for i := range states {
		s := states[i].s
		if s == nil {
			continue
		}
		s.mu.Lock()
		if err != nil {
			s.forget() // what the store kept of c is not known: the history is read at the next commit
			s.mu.Unlock()
			continue
		}
		load := s.add(c.Runs[i].Events)
		states[i].size = s.size()
		s.mu.Unlock()
		if load {
			evs, rerr := k.st.Events(c.Runs[i].Run.RunID, 0)
			s.mu.Lock()
			if !s.whole && rerr == nil {
				s.reset(evs)
			}
			states[i].size = s.size()
			s.mu.Unlock()
		}
	}
	k.mu.Lock()
	for i, tk := range states {
		u := &c.Runs[i]
		if s := tk.s; s != nil && err == nil {
			k.commits++
			s.run, s.last = recordOf(u.Run), k.commits
			k.touch(u.Run.RunID, s)
			if k.runs[u.Run.RunID] == s {
				k.held += tk.size - s.bytes
				s.bytes = tk.size
			}
		}
		if k.inflight[u.Run.RunID]--; k.inflight[u.Run.RunID] <= 0 {
			delete(k.inflight, u.Run.RunID)
		}
	}
	overHeld := k.held > heldBytesMax && k.held > k.heldThen+heldBytesMax/8
	if (len(k.dirty) >= settleAfter || overHeld) && !k.settling {
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

// settle brings the sum up to date with the commits and purges since the last call and keeps
// it in the store; ss.mu is held. It reads no run, unless the feed forgot purges since the
// last call (more than it remembers): then every run is read once, as a first scrape does.
func (k *counters) settle() error {
	if k.off.Load() {
		return nil // the catch-up failed: nothing of this process's is kept (catchUp)
	}
	ss := k.ss
	type item struct {
		id  string
		s   *runState
		run history.Run
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
		work = append(work, item{id: id, s: s, run: s.run.record()})
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
		s := it.s.summarize(it.id, it.run, k.st, &k.shapes)
		it.s.mu.Lock()
		n, lost := it.s.size(), it.s.lost
		it.s.mu.Unlock()
		k.mu.Lock()
		if k.runs[it.id] == it.s {
			k.held += n - it.s.bytes
			it.s.bytes = n
		}
		k.mu.Unlock()
		if lost {
			k.lost.Add(1)
		}
		ss.sum.takeOff(old(it.id, it.s))
		ss.sum.add(s, 1)
		p := pack(s)
		it.s.summary, changed[it.id] = p, p
	}
	for _, id := range gone {
		k.mu.Lock()
		s := k.runs[id]
		k.drop(id)
		k.mu.Unlock()
		ss.sum.takeOff(old(id, s))
		changed[id] = nil
	}
	ss.since = pos
	if len(changed) > 0 && k.kp.Keep(keptName, pos, packTotals(ss.sum, unsettled), changed, false) != nil {
		k.pending = changed // kept with the next scrape's, at its position
	}
	// A closed run's summary now lives in the store (or in pending): its state goes. So do
	// the states of the open runs committed longest ago beyond heldMax runs or heldBytesMax
	// bytes: a run's next commit reads its history again.
	k.mu.Lock()
	for _, it := range work {
		if !it.run.Open() && !it.s.dirty && k.inflight[it.id] == 0 && k.runs[it.id] == it.s {
			k.drop(it.id)
		}
	}
	if len(k.runs) > heldMax || k.held > heldBytesMax {
		k.dropOldest()
	}
	k.heldThen = k.held
	k.mu.Unlock()
	return nil
}

// heldMax bounds the runs whose state the counters hold, as the engine bounds the runs it
// holds: 10,000 open runs, the ones committed last.
var heldMax = 10_000

// heldBytesMax bounds what those states hold, about: a few long histories held whole (a spec
// that waits for signals) must not hold more than the tallies of thousands of runs.
var heldBytesMax = 32 << 20

// drop forgets the run's state; k.mu is held.
func (k *counters) drop(id string) {
	if s := k.runs[id]; s != nil {
		k.held -= s.bytes
		delete(k.runs, id)
	}
}

// dropOldest drops the states of runs summed and not committed since, those whose last
// commit is oldest first, until at most heldMax runs and heldBytesMax bytes are held (or no
// such run is left); k.mu is held.
func (k *counters) dropOldest() {
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
	for _, h := range idle {
		if len(k.runs) <= heldMax && k.held <= heldBytesMax {
			return
		}
		k.drop(h.id)
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
