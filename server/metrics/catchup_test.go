package metrics

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// gatedEvents holds every history read until gate is closed, so the background count of a
// database nothing counted is under way for as long as a test needs.
type gatedEvents struct {
	*boltstore.Store
	gate chan struct{}
}

func (g *gatedEvents) Events(id string, after uint64) ([]history.Event, error) {
	<-g.gate
	return g.Store.Events(id, after)
}

// uncounted is a database of n closed runs written without metrics: nothing counted is kept.
func uncounted(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wend.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.CommitClosed(t, st, n, time.Now().Add(-time.Hour), time.Second)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func sumOf(m map[string]float64, prefix, part string) float64 {
	var n float64
	for k, v := range m {
		if strings.HasPrefix(k, prefix) && strings.Contains(k, part) {
			n += v
		}
	}
	return n
}

func TestAnUncountedDatabaseIsCountedInTheBackground(t *testing.T) {
	path := uncounted(t, 5)
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gated := &gatedEvents{Store: st, gate: make(chan struct{})}
	m := New("")
	ts := m.TimeCommits(gated) // returns although every history read waits on the gate
	t.Cleanup(func() { ts.Close() })
	select {
	case <-m.CaughtUp():
		t.Fatal("the count ended with every history read held")
	default:
	}
	f := &fixture{t: t, m: m, http: httptest.NewServer(m.Handler(st, nil))}
	t.Cleanup(f.http.Close)

	during := f.scrape()
	if during["wend_metrics_catching_up"] != 1 {
		t.Errorf("wend_metrics_catching_up during the count = %v, want 1", during["wend_metrics_catching_up"])
	}
	if n := sumOf(during, "wend_runs{", `status="completed"`); n != 5 {
		t.Errorf("completed runs during the count = %v, want 5 (the store's kept counts)", n)
	}
	if n := sumOf(during, "wend_steps{", ""); n != 0 {
		t.Errorf("the step family is served during the count (%v steps); it needs every run read", n)
	}

	// A commit passes meanwhile (a new run's first events: nothing to read) and is counted.
	u := storetest.Started("wf-new", "new-1", time.Now())
	if err := ts.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	close(gated.gate)
	<-m.CaughtUp()

	s := &served{st: st, reads: &noReads{Store: st, t: t}, store: ts, fixture: f}
	after := s.compare("after the count")
	if after["wend_metrics_catching_up"] != 0 {
		t.Errorf("wend_metrics_catching_up after the count = %v, want 0", after["wend_metrics_catching_up"])
	}
	if n := sumOf(after, "wend_runs{", `status="running"`); n != 1 {
		t.Errorf("running runs after the count = %v, want 1 (the run committed during it)", n)
	}
}

// A store closed while the count is under way stops it and keeps nothing of it: the next
// process counts every run again, and gets a whole read's figures.
func TestACountStoppedByCloseKeepsNothing(t *testing.T) {
	path := uncounted(t, 3)
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gated := &gatedEvents{Store: st, gate: make(chan struct{})}
	m := New("")
	ts := m.TimeCommits(gated)
	closed := make(chan error, 1)
	go func() { closed <- ts.Close() }()
	for !m.counters.ss.stop.Load() { // Close asked the count to stop; now let its held read return
		time.Sleep(time.Millisecond)
	}
	close(gated.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	<-m.CaughtUp()
	if _, _, _, ok, err := mustOpen(t, path).Kept(keptName, nil); err != nil || ok {
		t.Fatalf("a stopped count kept a sum (ok %v, err %v)", ok, err)
	}
}

func mustOpen(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
