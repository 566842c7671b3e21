package metrics

import (
	"context"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
)

// Over boltstore a scrape reads only the runs changed since the previous one (the store's
// change feed) and the run counts kept at commit; after starts, closes and a purge its numbers
// are those of a fresh Metrics, which reads every run.
func TestScrapeOfChangedRunsMatchesAWholeRead(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "wend.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := New("")
	eng := engine.New(engine.Options{Store: m.TimeCommits(st), Activities: servertest.Acts{}, Logf: t.Logf})
	t.Cleanup(func() { eng.Close() })
	f := &fixture{t: t, m: m, srv: server.New(eng, st), dir: t.TempDir(), http: httptest.NewServer(m.Handler(st, eng))}
	t.Cleanup(f.http.Close)
	compare := func(when string) {
		t.Helper()
		fresh := &fixture{t: t, http: httptest.NewServer(New("").Handler(st, eng))}
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

// same compares two metric values; a histogram's sum may differ in its last bits, summed in
// another order.
func same(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
