package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// runCounter is a store that keeps its run counts at commit (boltstore): the runs gauge reads
// them, not the runs.
type runCounter interface {
	RunCounts() (map[string]map[string]int, error)
}

// changeFeed is a store that says which runs commits and purges changed since a position
// (boltstore): a scrape then reads only those. Without it, every scrape reads every run.
type changeFeed interface {
	ChangedRuns(since uint64) (ids []string, now uint64, complete bool)
}

// runKeeper is a store that keeps what a reader derives from its runs beside them, at a
// position of its change feed (boltstore's Kept and Keep): the summaries and their sum are
// kept there, so a new process's first scrape starts from the sum the last one kept and reads
// only the runs changed since, as any scrape does, never every run.
type runKeeper interface {
	Kept(name string, ids []string) (pos uint64, sum []byte, runs map[string][]byte, ok bool, err error)
	Keep(name string, pos uint64, sum []byte, runs map[string][]byte, reset bool) error
}

// keptName names the metrics' summaries among what a store keeps.
const keptName = "metrics"

// summaries holds every run's summary and their running sum, keyed by the names as stored
// (the label bound is applied per scrape, on the sum). A run changed since the last scrape is
// read again and its old summary taken off the sum before its new one is added; a purged run's
// is taken off. With a store that keeps them (runKeeper), the summaries live in the store, not
// here: a scrape reads the old summaries of the runs it reads again, and writes their new ones
// and the sum back at the feed's position.
type summaries struct {
	mu    sync.Mutex               // one refresh at a time; held while the sum is read
	runs  map[string]packedSummary // every run's, without a keeper; this scrape's, with one
	sum   *totals
	since uint64 // the change feed's position the summaries are up to
	ready bool   // every run has been read once (or the kept sum was taken up)
	// keepFailed is set when the store failed to keep the summaries: they are then held here.
	keepFailed bool
	// changed are the runs whose summary this scrape made or dropped (nil: dropped), for Keep.
	changed map[string][]byte
	stop    atomic.Bool   // set by a closing store: a read of every run gives up (readAll)
	specs   runview.Specs // the spec texts of the runs read, each loaded once
}

func newSummaries() *summaries {
	return &summaries{runs: map[string]packedSummary{}, sum: newTotals()}
}

// totals are the summed numbers, keyed by names (raw in summaries.sum, bounded in a scrape's).
type totals struct {
	runs         map[string]map[string]int // workflow -> status
	failures     map[string]map[string]int // workflow -> category
	nonRetryable map[string]int            // workflow
	attempts     map[string]map[string]int // activity -> outcome
	activities   map[string]map[string]int // activity -> status
	steps        map[string]int
	backlog      runview.Backlog
	signals      int
	latency      map[string]*stepHist
}

func newTotals() *totals {
	return &totals{runs: map[string]map[string]int{}, failures: map[string]map[string]int{}, nonRetryable: map[string]int{},
		attempts: map[string]map[string]int{}, activities: map[string]map[string]int{}, steps: map[string]int{},
		latency: map[string]*stepHist{}}
}

// add adds s to t, or takes it off with sign -1. Counts that reach zero are removed, so a name
// whose runs are all purged leaves the metrics as it would from a fresh read.
func (t *totals) add(s *runSummary, sign int) {
	count2(t.runs, s.name, s.status, sign)
	for cat, n := range s.failures {
		count2(t.failures, s.name, cat, sign*n)
	}
	count1(t.nonRetryable, s.name, sign*s.nonRetryable)
	for act, byOutcome := range s.attempts {
		for o, n := range byOutcome {
			count2(t.attempts, act, o, sign*n)
		}
	}
	for act, byStatus := range s.activities {
		for st, n := range byStatus {
			count2(t.activities, act, st, sign*n)
		}
	}
	for st, n := range s.steps {
		count1(t.steps, st, sign*n)
	}
	t.backlog.RetryingActivities += sign * s.backlog.RetryingActivities
	t.backlog.PendingActivities += sign * s.backlog.PendingActivities
	t.backlog.PendingTimers += sign * s.backlog.PendingTimers
	t.signals += sign * s.signals
	for k, h := range s.latency {
		if t.latency[k] == nil {
			t.latency[k] = &stepHist{}
		}
		t.latency[k].add(h, sign)
		if t.latency[k].count == 0 {
			delete(t.latency, k)
		}
	}
}

func count1(m map[string]int, k string, n int) {
	if m[k] += n; m[k] == 0 {
		delete(m, k)
	}
}

func count2(m map[string]map[string]int, outer, inner string, n int) {
	if m[outer] == nil {
		m[outer] = map[string]int{}
	}
	if count1(m[outer], inner, n); len(m[outer]) == 0 {
		delete(m, outer)
	}
}

// totals brings the summaries up to date with st, from k's counters when there are (they
// read no run), and returns their sum under the bounded label values, the runs gauge from
// st's run counts when it keeps them.
func (ss *summaries) totals(st history.Store, k *counters) (*totals, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	refresh := ss.refresh
	if k != nil {
		refresh = func(history.Store) error { return k.settle() }
	}
	if err := refresh(st); err != nil {
		return nil, err
	}
	runs := ss.sum.runs
	if rc, ok := st.(runCounter); ok {
		var err error
		if runs, err = rc.RunCounts(); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
	}
	return ss.bounded(runs), nil
}

// refresh reads the runs changed since the last scrape, or every run when the store has no
// change feed, this is the first scrape and nothing was kept, or the feed has forgotten
// changes since.
func (ss *summaries) refresh(st history.Store) error {
	feed, ok := st.(changeFeed)
	if !ok {
		return ss.readAll(st)
	}
	keeper, keeps := st.(runKeeper)
	keeps = keeps && !ss.keepFailed
	var unsettled []string
	if keeps && !ss.ready {
		unsettled = ss.takeUpKept(keeper)
	}
	ids, now, complete := feed.ChangedRuns(ss.since)
	for _, id := range unsettled {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if !ss.ready || !complete {
		ss.runs, ss.sum = map[string]packedSummary{}, newTotals()
		if err := ss.readAll(st); err != nil {
			return err
		}
		ss.since, ss.ready = now, true
		if keeps {
			ss.keepAll(keeper)
		}
		return nil
	}
	if keeps {
		clear(ss.runs) // this scrape's: the old summaries of the runs it reads again
		if _, _, old, ok, err := keeper.Kept(keptName, ids); ok && err == nil {
			for id, v := range old {
				ss.runs[id] = v
			}
		}
		ss.changed = map[string][]byte{}
	}
	for _, id := range ids {
		r, err := st.Run(id)
		switch {
		case errors.Is(err, history.ErrNotFound):
			ss.drop(id)
		case err != nil:
			// Left as it was; the next whole read (a new process) tries again. One bad run must
			// not blank the metrics.
		default:
			ss.update(st, r)
		}
	}
	ss.since = now
	if keeps {
		if len(ss.changed) > 0 && keeper.Keep(keptName, ss.since, packTotals(ss.sum, nil), ss.changed, false) != nil {
			// What this scrape read is not kept, nor every other summary here: read every run
			// again, into memory, at the next scrape.
			ss.keepFailed, ss.ready = true, false
		}
		ss.changed = nil
		clear(ss.runs)
	}
	return nil
}

// wholeReadAhead says whether the next refresh reads every run: nothing this build reads was
// kept, or the feed forgot changes since the kept position. It reads the kept sum only, no run.
func (ss *summaries) wholeReadAhead(st history.Store) bool {
	feed, ok := st.(changeFeed)
	keeper, keeps := st.(runKeeper)
	if !ok || !keeps || ss.keepFailed {
		return false
	}
	if rc, ok := st.(runCounter); ok { // a new database: nothing to read, at once
		if runs, err := rc.RunCounts(); err == nil && len(runs) == 0 {
			return false
		}
	}
	since := ss.since
	if !ss.ready {
		pos, b, _, ok, err := keeper.Kept(keptName, nil)
		if !ok || err != nil {
			return true
		}
		if _, _, err := unpackTotals(b); err != nil {
			return true
		}
		since = pos
	}
	_, _, complete := feed.ChangedRuns(since)
	return !complete
}

// readAll stops, having kept nothing, once stop is set (a store closing under a catch-up).
var errReadStopped = errors.New("metrics: the read of every run was stopped")

// takeUpKept starts from the sum the store kept, at its position, when there is one this
// build reads, and returns the runs whose commits were under way when it was kept: they are
// read again with those the feed names after the position.
func (ss *summaries) takeUpKept(keeper runKeeper) (unsettled []string) {
	pos, b, _, ok, err := keeper.Kept(keptName, nil)
	if !ok || err != nil {
		return nil
	}
	t, unsettled, err := unpackTotals(b)
	if err != nil {
		return nil
	}
	ss.sum, ss.since, ss.ready = t, pos, true
	return unsettled
}

// keepAll writes every summary and the sum to the store, in place of what it kept, and
// holds none of them here after.
func (ss *summaries) keepAll(keeper runKeeper) {
	runs := make(map[string][]byte, len(ss.runs))
	for id, p := range ss.runs {
		runs[id] = p
	}
	if keeper.Keep(keptName, ss.since, packTotals(ss.sum, nil), runs, true) != nil {
		ss.keepFailed = true // held here from now on
		return
	}
	ss.runs = map[string]packedSummary{}
}

// readAll reads every run (in the store's slices) and the histories of the ones whose summary
// is missing or out of date.
func (ss *summaries) readAll(st history.Store) error {
	runs, err := st.Runs(history.RunFilter{})
	if err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	seen := make(map[string]bool, len(runs))
	for _, r := range runs {
		if ss.stop.Load() {
			return errReadStopped
		}
		seen[r.RunID] = true
		ss.update(st, r)
	}
	for id := range ss.runs {
		if !seen[id] {
			ss.drop(id)
		}
	}
	return nil
}

// update replaces r's summary when r changed since it was made. A run whose history cannot be
// read counts in the runs gauge only (its page in the UI says why).
func (ss *summaries) update(st history.Store, r history.Run) {
	old, had := ss.runs[r.RunID]
	if had {
		if name, status, lastSeq := old.header(); lastSeq == r.LastSeq && status == r.Status && name == r.Name {
			return
		}
	}
	s := newRunSummary()
	s.name, s.status, s.lastSeq = r.Name, r.Status, r.LastSeq
	if evs, err := st.Events(r.RunID, 0); err == nil {
		if sum, err := summarize(r, evs, &ss.specs); err == nil {
			s = sum
		}
	}
	ss.drop(r.RunID)
	ss.sum.add(s, 1)
	p := pack(s)
	ss.runs[r.RunID] = p
	if ss.changed != nil {
		ss.changed[r.RunID] = p
	}
}

// drop takes the run's summary off the sum and forgets it.
func (ss *summaries) drop(id string) {
	old, had := ss.runs[id]
	if !had {
		return
	}
	delete(ss.runs, id)
	if ss.changed != nil {
		ss.changed[id] = nil
	}
	if s, err := old.unpack(); err == nil { // packed by this build (the kept sum's format says so)
		ss.sum.add(s, -1)
	}
}

// bounded is the sum under the bounded label values (boundNames), with runs the run counts.
// Every workflow with runs has its failure counts, at zero if need be.
func (ss *summaries) bounded(runs map[string]map[string]int) *totals {
	workflows, activities := map[string]bool{}, map[string]bool{}
	for wf := range runs {
		workflows[wf] = true
	}
	for act := range ss.sum.activities {
		activities[act] = true
	}
	for act := range ss.sum.attempts {
		activities[act] = true
	}
	wfLabel, actLabel := boundNames(workflows), boundNames(activities)
	t := newTotals()
	for wf, byStatus := range runs {
		l := wfLabel.label(wf)
		for st, n := range byStatus {
			count(t.runs, l, st, n)
		}
		if t.failures[l] == nil {
			t.failures[l] = map[string]int{}
		}
		addCounts(t.failures[l], ss.sum.failures[wf])
		t.nonRetryable[l] += ss.sum.nonRetryable[wf]
	}
	for act, byOutcome := range ss.sum.attempts {
		for o, n := range byOutcome {
			count(t.attempts, actLabel.label(act), o, n)
		}
	}
	for act, byStatus := range ss.sum.activities {
		for st, n := range byStatus {
			count(t.activities, actLabel.label(act), st, n)
		}
	}
	addCounts(t.steps, ss.sum.steps)
	t.backlog, t.signals = ss.sum.backlog, ss.sum.signals
	for k, h := range ss.sum.latency {
		t.latency[k] = &stepHist{}
		t.latency[k].add(h, 1)
	}
	return t
}

func addCounts(dst, src map[string]int) {
	for k, v := range src {
		dst[k] += v
	}
}
