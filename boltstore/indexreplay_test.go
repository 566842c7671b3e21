package boltstore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// crashedImage runs commit on a fresh store whose writer checkpoints nothing after the
// first settle, and returns what a crash then leaves: bbolt's file as of that settle and the
// log holding every commit since. Opening it replays the log.
func crashedImage(t *testing.T, before, after func(s *Store)) string {
	t.Helper()
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	before(s)
	must(t, s.settle())
	db, err := os.ReadFile(path)
	must(t, err)
	s.holdCheckpoints = true
	after(s)
	img := crashImage{db: db, segments: map[string][]byte{}}
	names, err := segments(walDir(path))
	must(t, err)
	for _, name := range append(names, filepath.Join(walDir(path), logIDName)) {
		b, err := os.ReadFile(name)
		must(t, err)
		img.segments[filepath.Base(name)] = b
	}
	s.dropOpen() // as a crash: nothing more reaches bbolt's file
	s.db.Close()
	return img.write(t)
}

// TestIndexesReplayedFromLog: the log's replay after a crash leaves every index as the commits
// made it live: a run started, a search value changed, a run that moved to a new workflow
// index entry, all committed only to the log, are found by an equality filter and by their
// workflow, and check finds nothing missing or extra.
func TestIndexesReplayedFromLog(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	a := storetest.Started("wa", "ra", at)
	a.Run.Search = map[string]any{"customer": "ann", "amount": 10.0}
	path := crashedImage(t, func(s *Store) {
		commitRun(t, s, a) // in bbolt's file
	}, func(s *Store) {
		b := storetest.Started("wb", "rb", at.Add(time.Second))
		b.Run.Search = map[string]any{"customer": "ann", "vip": true}
		commitRun(t, s, b)
		a2 := storetest.Next(a.Run, history.ActivityCompleted, 1)
		a2.Run.Search = map[string]any{"customer": "bob", "amount": 10.0}
		commitRun(t, s, a2)
		c := storetest.Started("wc", "rc", at.Add(2*time.Second))
		c.Run.Search = map[string]any{"customer": "ann"}
		commitRun(t, s, c)
	})
	s := openAt(t, path, Options{})
	if got, want := searchEntries(t, s), []string{"amount=10 ra", `customer="ann" rb`, `customer="ann" rc`, `customer="bob" ra`, "vip=true rb"}; !slices.Equal(got, want) {
		t.Errorf("search index after the replay %q, want %q", got, want)
	}
	for _, tc := range []struct{ field, value, want string }{
		{"customer", "ann", "[rc rb]"},
		{"customer", "bob", "[ra]"},
		{"vip", "true", "[rb]"},
	} {
		runs, err := s.Runs(history.RunFilter{Search: []history.SearchCond{{Field: tc.field, Op: "=", Value: tc.value}}})
		if err != nil || fmtIDs(runs) != tc.want {
			t.Errorf("%s = %s after the replay: %v %v, want %s", tc.field, tc.value, runIDs(runs), err, tc.want)
		}
	}
	for _, wf := range []string{"wa", "wb", "wc"} {
		if runs, err := s.Runs(history.RunFilter{WorkflowID: wf}); err != nil || len(runs) != 1 {
			t.Errorf("workflow %s after the replay: %v %v", wf, runIDs(runs), err)
		}
	}
	if problems, err := s.Check(); err != nil || len(problems) != 0 {
		t.Errorf("check after the replay: %q %v", problems, err)
	}
}

func fmtIDs(runs []history.Run) string {
	ids := runIDs(runs)
	out := "["
	for i, id := range ids {
		if i > 0 {
			out += " "
		}
		out += id
	}
	return out + "]"
}
