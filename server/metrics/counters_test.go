package metrics

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/enginetest"
)

// noReads is a boltstore whose history reads fail the test while armed (around a scrape,
// with the engine idle), and are counted otherwise.
type noReads struct {
	*boltstore.Store
	t     *testing.T
	armed atomic.Bool
	reads atomic.Int64
}

func (n *noReads) read(what string) {
	if n.armed.Load() {
		n.t.Errorf("a scrape read %s", what)
	}
	n.reads.Add(1)
}

func (n *noReads) Run(id string) (history.Run, error) {
	n.read("run " + id)
	return n.Store.Run(id)
}

func (n *noReads) Events(id string, after uint64) ([]history.Event, error) {
	n.read("the history of " + id)
	return n.Store.Events(id, after)
}

func (n *noReads) Runs(f history.RunFilter) ([]history.Run, error) {
	n.read("every run")
	return n.Store.Runs(f)
}

// served is a serve over a database: the metrics' counters fed by the engine's commits, the
// history reads armed to fail during scrapes.
type served struct {
	*fixture
	st    *boltstore.Store
	reads *noReads
	store history.Store // TimeCommits'
	eng   *engine.Engine
	// caughtUp counts the histories TimeCommits read to catch the kept sum up.
	caughtUp int64
}

func serveAt(t *testing.T, path string) *served {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reads := &noReads{Store: st, t: t}
	m := New("")
	ts := m.TimeCommits(reads)
	<-m.CaughtUp()
	caughtUp := reads.reads.Load()
	if m.counters == nil {
		t.Fatal("TimeCommits over a boltstore counts no commit")
	}
	eng := enginetest.New(t, engine.Options{Store: ts, Activities: servertest.Acts{}})
	if _, err := eng.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := &served{st: st, reads: reads, store: ts, eng: eng, caughtUp: caughtUp,
		fixture: &fixture{t: t, m: m, srv: server.New(eng, st), dir: t.TempDir(), http: httptest.NewServer(m.Handler(reads, eng))}}
	return s
}

// close stops the engine and closes the store through TimeCommits' (which keeps the sum).
func (s *served) close() {
	s.t.Helper()
	s.http.Close()
	s.eng.Close()
	if err := s.store.Close(); err != nil {
		s.t.Fatal(err)
	}
}

// scrape scrapes with the history reads armed.
func (s *served) scrape() map[string]float64 {
	s.t.Helper()
	s.reads.armed.Store(true)
	defer s.reads.armed.Store(false)
	return s.fixture.scrape()
}

// wholeRead is the metrics of a fresh Metrics that reads every run.
func (s *served) wholeRead() map[string]float64 {
	s.t.Helper()
	whole := &fixture{t: s.t, http: httptest.NewServer(New("").Handler(wholeReads{s.st}, s.eng))}
	defer whole.http.Close()
	return whole.scrape()
}

// compare fails the test where a scrape (which reads no run) and a whole read differ.
func (s *served) compare(when string) map[string]float64 {
	s.t.Helper()
	s.quiet()
	got, want := s.scrape(), s.wholeRead()
	if diff := storedDiff(got, want); diff != "" {
		s.t.Errorf("%s: the counters differ from a whole read:\n%s", when, diff)
	}
	return got
}

// quiet waits until no commit is between the store and the counters: one that the store has
// answered (so a whole read sees it) but whose events the counters have not yet added. A scrape
// in that moment is a commit behind, as any read beside a commit is; the comparison is made
// once every commit has passed.
func (f *fixture) quiet() {
	f.t.Helper()
	k := f.m.counters
	if k == nil {
		return // no counters: every scrape reads the store
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		k.mu.Lock()
		n := len(k.inflight)
		k.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%d runs' commits still under way after 10 s", n)
		}
	}
}

// storedDiff lists the metrics read from the store that differ between got and want.
func storedDiff(got, want map[string]float64) string {
	var b strings.Builder
	stored := func(k string) bool {
		for _, p := range []string{"wend_runs", "wend_steps", "wend_activity_attempts", "wend_activities", "wend_failures",
			"wend_retry_backlog", "wend_activities_pending", "wend_timers_pending", "wend_signals_pending", "wend_step_duration"} {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		return false
	}
	for k, v := range want {
		if stored(k) && !same(got[k], v) {
			fmt.Fprintf(&b, "  %s = %v, a whole read says %v\n", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && stored(k) && v != 0 {
			fmt.Fprintf(&b, "  %s = %v, absent from a whole read\n", k, v)
		}
	}
	return b.String()
}

// A scrape reads no run: the counters are fed by the commits, and a restarted serve takes up
// the sum the last one kept. Across a restart, a purge, and a run open across the restart that
// goes on (its history is read once, at its commit, not at a scrape), every scrape equals a
// whole read.
func TestScrapesReadNoRunAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := serveAt(t, path)
	s.start("f1", failSpec)
	s.settle("f1", closed)
	s.start("w1", waitSpec)
	s.settle("w1", waitingFor(runview.WaitSignal, 0))
	s.compare("first scrape")
	s.start("k1", flakySpec)
	s.settle("k1", waitingFor(runview.WaitActivity, 2))
	s.compare("a run retrying")
	s.close()

	s = serveAt(t, path)
	t.Cleanup(s.close)
	if n := s.caughtUp; n != 0 {
		t.Errorf("a serve started after a clean close read %d histories, want none", n)
	}
	got := s.compare("first scrape after the restart")
	if got[`wend_runs{status="failed",workflow="failing"}`] != 1 {
		t.Fatalf("failed runs after the restart: %v, want 1", got[`wend_runs{status="failed",workflow="failing"}`])
	}
	if _, err := s.srv.Signal(context.Background(), "w1", "approve", nil); err != nil {
		t.Fatal(err)
	}
	s.settle("w1", closed)
	s.start("f2", failSpec)
	s.settle("f2", closed)
	s.compare("a run open across the restart, closed")
	if _, err := s.srv.Cancel(context.Background(), "k1", "enough"); err != nil {
		t.Fatal(err)
	}
	s.settle("k1", closed)
	f1, err := s.srv.Show("f1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.PurgeRuns(context.Background(), []string{f1.Run.RunID}, nil); err != nil {
		t.Fatal(err)
	}
	got = s.compare("after a cancel and a purge")
	if got[`wend_runs{status="failed",workflow="failing"}`] != 1 {
		t.Fatalf("failed runs after the purge: %v, want 1", got[`wend_runs{status="failed",workflow="failing"}`])
	}
}

// A run this process has not seen from its first event (committed before TimeCommits, by
// another process) has its history read at its next commit, even one that brings no event (a
// record's change, as a queued run's start): its summary is then a whole read's, and the
// scrapes after read no run.
func TestARunFirstSeenWithoutEventsIsReadAtItsCommit(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "wend.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u := storetest.Started("wf", "r1", t0)
	next := storetest.Next(u.Run, history.StepFailed, 1)
	next.Events[0].Data = history.MustData(history.AttemptFailure{Failure: history.Failure{Category: history.CategoryTimeout, Message: "late"}})
	u.Events, u.Run = append(u.Events, next.Events...), next.Run
	if err := st.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	reads := &noReads{Store: st, t: t}
	m := New("")
	ts := m.TimeCommits(reads)
	<-m.CaughtUp()
	s := &served{st: st, reads: reads, store: ts,
		fixture: &fixture{t: t, m: m, http: httptest.NewServer(m.Handler(reads, nil))}}
	t.Cleanup(s.http.Close)
	s.compare("before the commit")
	rec := u.Run
	rec.Status, rec.ClosedAt = history.StatusCompleted, t0.Add(time.Minute)
	if err := ts.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: rec}}}); err != nil {
		t.Fatal(err)
	}
	got := s.compare("after a commit of its record alone")
	if n := got[`wend_failures_total{category="timeout",workflow="w"}`]; n != 1 {
		t.Errorf("the run's failure is counted %v times, want 1", n)
	}
}

// With no scrape, the counters settle by themselves once enough runs have committed: the
// states of closed runs go, and the sum stays that of a whole read.
func TestCountersSettleWithoutScrapes(t *testing.T) {
	s := servedStore(t)
	m, ts := s.m, s.store
	ids := loadClosed(t, ts, 3*settleAfter) // 500 runs a commit
	held := func() int {
		m.counters.mu.Lock()
		defer m.counters.mu.Unlock()
		return len(m.counters.runs)
	}
	for deadline := time.Now().Add(30 * time.Second); held() >= len(ids)-settleAfter; {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs of %d held after their close, with no scrape", held(), len(ids))
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := s.compare("after the counters settled by themselves")
	if n := got[`wend_runs{status="completed",workflow="w"}`]; n != float64(len(ids)) {
		t.Errorf("completed runs: %v, want %d", n, len(ids))
	}
}
