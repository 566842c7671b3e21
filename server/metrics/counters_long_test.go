package metrics

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
)

// servedStore is TimeCommits over a boltstore, with no engine: the tests commit histories
// themselves.
func servedStore(t *testing.T) *served {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "wend.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reads := &noReads{Store: st, t: t}
	m := New("")
	ts := m.TimeCommits(reads)
	<-m.CaughtUp()
	s := &served{st: st, reads: reads, store: ts, fixture: &fixture{t: t, m: m, http: httptest.NewServer(m.Handler(reads, nil))}}
	t.Cleanup(s.http.Close)
	return s
}

// commitEvents commits events from..to (from 1) of a run of benchEvent's kind, in one commit.
func (s *served) commitEvents(id, kind string, from, to int) {
	s.t.Helper()
	u := history.RunUpdate{Run: history.Run{WorkflowID: "w-" + id, RunID: id, Name: "wf", Status: history.StatusRunning, LastSeq: uint64(to)}}
	for n := from; n <= to; n++ {
		u.Events = append(u.Events, benchEvent(id, kind, n))
	}
	if err := s.store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		s.t.Fatal(err)
	}
}

// heldOf is the run's state's bytes and the events its settles have folded.
func (s *served) heldOf(id string) (bytes, folded int) {
	k := s.m.counters
	k.mu.Lock()
	st := k.runs[id]
	k.mu.Unlock()
	if st == nil {
		s.t.Fatalf("the counters hold no state for %s", id)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.size(), st.folded
}

// A long run costs each scrape the events it committed since the previous one, whatever its
// length: a scrape folds those and no others, reads no history, and the run's state does not
// grow with its tries.
func TestALongRunCostsAScrapeItsNewEventsOnly(t *testing.T) {
	s := servedStore(t)
	const id, perScrape = "long", 30 // ten tries of three events between scrapes
	s.commitEvents(id, "retries", 1, 2)
	s.compare("after its start")
	var early int
	last := 2
	for round := 1; round <= 100; round++ {
		_, before := s.heldOf(id)
		for range perScrape / 3 {
			s.commitEvents(id, "retries", last+1, last+3)
			last += 3
		}
		s.scrape()
		bytes, after := s.heldOf(id)
		if after-before != perScrape {
			t.Fatalf("round %d (event %d): the scrape folded %d events, want the %d committed since the last", round, last, after-before, perScrape)
		}
		switch round {
		case 1:
			early = bytes
		case 100:
			t.Logf("the run's state: %d bytes after %d events, %d after %d", bytes, last, early, 2+perScrape)
			if bytes > early {
				t.Errorf("the run's state holds %d bytes after %d events, %d after %d", bytes, last, early, 2+perScrape)
			}
		}
		if round%25 == 0 {
			s.compare(fmt.Sprintf("after %d events", last))
		}
	}
}

// Past heldBytesMax, a settle drops the states of the runs committed longest ago until what
// is held is under the bound again; a dropped run's next commit reads its history, and the
// scrapes still equal a whole read and read no run.
func TestHeldStatesStayUnderTheirByteBound(t *testing.T) {
	defer func(n int) { heldBytesMax = n }(heldBytesMax)
	heldBytesMax = 8 << 10
	s := servedStore(t)
	const runs = 40
	for r := range runs {
		s.commitEvents(fmt.Sprint("run-", r), "timer", 1, 3)
	}
	s.compare("after the runs waited")
	k := s.m.counters
	k.mu.Lock()
	held, n := k.held, len(k.runs)
	k.mu.Unlock()
	t.Logf("%d of %d states held, %d bytes", n, runs, held)
	if held > heldBytesMax || n == runs {
		t.Fatalf("%d states hold %d bytes after a scrape, bound %d", n, held, heldBytesMax)
	}
	reads := s.reads.reads.Load()
	for r := range runs {
		s.commitEvents(fmt.Sprint("run-", r), "timer", 4, 4)
	}
	if s.reads.reads.Load() == reads {
		t.Error("no dropped run's history was read at its next commit")
	}
	s.compare("after each run's next commit")
	k.mu.Lock()
	held = k.held
	k.mu.Unlock()
	if held > heldBytesMax {
		t.Errorf("the states hold %d bytes after a scrape, bound %d", held, heldBytesMax)
	}
}

// A history the tally cannot follow (here, an event without a time: not one the engine
// writes) is read at the scrape after and held whole from then on: the scrapes still equal a
// whole read.
func TestAHistoryTheTallyCannotFollowIsHeldWhole(t *testing.T) {
	s := servedStore(t)
	s.commitEvents("odd", "steps", 1, 4)
	s.compare("before")
	u := history.RunUpdate{Run: history.Run{WorkflowID: "w-odd", RunID: "odd", Name: "wf", Status: history.StatusRunning, LastSeq: 5}}
	ev := benchEvent("odd", "steps", 5)
	ev.Time = time.Time{}
	u.Events = []history.Event{ev}
	if err := s.store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	s.quiet()
	got, want := s.fixture.scrape(), s.wholeRead() // this scrape reads the run
	if diff := storedDiff(got, want); diff != "" {
		t.Errorf("the counters differ from a whole read:\n%s", diff)
	}
	if s.m.counters.lost.Load() == 0 {
		t.Error("the tally followed a history with an event without a time")
	}
	s.commitEvents("odd", "steps", 6, 20)
	s.compare("after its close") // held whole: this scrape reads no run
}
