package metrics

import (
	"context"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/enginetest"
)

// Over boltstore a scrape reads the counters fed by the commits, the purges the store's change
// feed names and the run counts kept at commit; after starts, closes and a purge its numbers
// are those of a fresh Metrics, which reads every run.
func TestScrapeOfChangedRunsMatchesAWholeRead(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "wend.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := New("")
	counted := m.TimeCommits(st)
	<-m.CaughtUp()
	eng := enginetest.New(t, engine.Options{Store: counted, Activities: servertest.Acts{}})
	f := &fixture{t: t, m: m, srv: server.New(eng, st), dir: t.TempDir(), http: httptest.NewServer(m.Handler(st, eng))}
	t.Cleanup(f.http.Close)
	compare := func(when string) {
		t.Helper()
		f.quiet()
		fresh := &fixture{t: t, http: httptest.NewServer(New("").Handler(wholeReads{st}, eng))}
		defer fresh.http.Close()
		got, want := f.scrape(), fresh.scrape()
		for k, v := range want {
			if strings.HasPrefix(k, "wend_") && !strings.HasPrefix(k, "wend_commit_duration") && !strings.HasPrefix(k, "wend_build_info") && !same(got[k], v) {
				t.Errorf("%s: %s = %v, a whole read says %v", when, k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok && strings.HasPrefix(k, "wend_runs") {
				t.Errorf("%s: %s = %v, absent from a whole read", when, k, got[k])
			}
		}
	}
	f.start("f1", failSpec)
	f.settle("f1", closed)
	f.start("w1", waitSpec)
	f.settle("w1", waitingFor(runview.WaitSignal, 0))
	compare("first scrape")
	f.start("f2", failSpec)
	f.settle("f2", closed)
	f.start("d1", delaySpec)
	f.settle("d1", waitingFor(runview.WaitTimer, 0))
	compare("after more runs")
	if got := f.scrape()[`wend_runs{status="failed",workflow="failing"}`]; got != 2 {
		t.Fatalf("failed runs of failing: %v, want 2", got)
	}
	f1, err := f.srv.Show("f1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PurgeRuns(context.Background(), []string{f1.Run.RunID}, nil); err != nil {
		t.Fatal(err)
	}
	compare("after a purge")
	if got := f.scrape()[`wend_runs{status="failed",workflow="failing"}`]; got != 1 {
		t.Fatalf("failed runs of failing after the purge: %v, want 1", got)
	}
}

// wholeReads is a store that keeps nothing for its readers and has no change feed: a Metrics
// over it reads every run at every scrape, the reference the kept sums are compared with.
type wholeReads struct{ history.Store }

// countedReads is a boltstore that counts the histories a scrape reads and fails a test that
// lists every run.
type countedReads struct {
	*boltstore.Store
	t      *testing.T
	events atomic.Int64
}

func (c *countedReads) Events(runID string, after uint64) ([]history.Event, error) {
	c.events.Add(1)
	return c.Store.Events(runID, after)
}

func (c *countedReads) Runs(f history.RunFilter) ([]history.Run, error) {
	c.t.Errorf("a scrape listed the runs (%+v)", f)
	return c.Store.Runs(f)
}

// The summaries and their sum are kept in the store: a new process's first scrape (a new
// Metrics over the database opened again, which does not see the commits: no TimeCommits)
// takes up what the last process kept and reads the histories of the runs changed since only,
// never every run, and its numbers are those of a whole read.
func TestFirstScrapeOfANewProcessReadsOnlyChangedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := New("")
	timed := m.TimeCommits(st)
	<-m.CaughtUp()
	eng := enginetest.New(t, engine.Options{Store: timed, Activities: servertest.Acts{}})
	f := &fixture{t: t, m: m, srv: server.New(eng, st), dir: t.TempDir(), http: httptest.NewServer(m.Handler(st, eng))}
	for _, id := range []string{"f1", "f2", "f3", "f4"} {
		f.start(id, failSpec)
		f.settle(id, closed)
	}
	f.scrape()
	f.http.Close()
	eng.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m = New("")
	eng = enginetest.New(t, engine.Options{Store: st, Activities: servertest.Acts{}})
	counted := &countedReads{Store: st, t: t}
	f = &fixture{t: t, m: m, srv: server.New(eng, st), dir: t.TempDir(), http: httptest.NewServer(m.Handler(counted, eng))}
	t.Cleanup(f.http.Close)
	f.start("f5", failSpec)
	f.settle("f5", closed)
	got := f.scrape()
	if n := counted.events.Load(); n != 1 {
		t.Errorf("the first scrape of a new process read %d histories, want 1 (f5's)", n)
	}
	whole := &fixture{t: t, http: httptest.NewServer(New("").Handler(wholeReads{st}, eng))}
	defer whole.http.Close()
	want := whole.scrape()
	for k, v := range want {
		if strings.HasPrefix(k, "wend_") && !strings.HasPrefix(k, "wend_commit_duration") && !strings.HasPrefix(k, "wend_build_info") && !same(got[k], v) {
			t.Errorf("%s = %v, a whole read says %v", k, got[k], v)
		}
	}
	if got[`wend_runs{status="failed",workflow="failing"}`] != 5 {
		t.Fatalf("failed runs: %v, want 5", got[`wend_runs{status="failed",workflow="failing"}`])
	}
}

// same compares two metric values; a histogram's sum may differ in its last bits, summed in
// another order.
func same(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
