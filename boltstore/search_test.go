package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestSearchIndexFollowsRecords: the search index holds an entry per current search value of
// each run: a changed value moves its entry, a purge takes the run's entries, and a query reads
// the runs through it (an entry taken out of the file by hand hides its run from "=" and "!="
// alike, and wend check names it).
func TestSearchIndexFollowsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	ctx := context.Background()
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	commit := func(us ...history.RunUpdate) {
		t.Helper()
		if err := s.Commit(ctx, history.Commit{Runs: us}); err != nil {
			t.Fatal(err)
		}
	}
	a := storetest.Started("wa", "ra", at)
	a.Run.Search = map[string]any{"customer": "ann", "amount": 10.0, "vip": true}
	b := storetest.Started("wb", "rb", at.Add(time.Second))
	b.Run.Search = map[string]any{"customer": "ann", "paid_at": "2026-05-01T08:00:00Z"}
	commit(a, b)
	a = storetest.Next(a.Run, history.ActivityCompleted, 1)
	a.Run.Search = map[string]any{"customer": "ann", "amount": 150.0}
	commit(a)
	if got, want := searchEntries(t, s), []string{"amount=150 ra", `customer="ann" ra`, `customer="ann" rb`, `paid_at="2026-05-01T08:00:00Z" rb`}; !slices.Equal(got, want) {
		t.Fatalf("index %q, want %q", got, want)
	}
	for _, tc := range []struct{ field, value, want string }{
		{"customer", "ann", "[rb ra]"},
		{"amount", "150.0", "[ra]"},
		{"amount", "10", "[]"},
		{"vip", "true", "[]"},
		{"paid_at", "2026-05-01T10:00:00+02:00", "[rb]"},
	} {
		runs, err := s.Runs(history.RunFilter{Search: []history.SearchCond{{Field: tc.field, Op: "=", Value: tc.value}}})
		if err != nil || fmt.Sprint(runIDs(runs)) != tc.want {
			t.Errorf("%s = %s: %v %v, want %s", tc.field, tc.value, runIDs(runs), err, tc.want)
		}
	}

	b = storetest.Next(b.Run, history.WorkflowCompleted, 1)
	b.Run.Status, b.Run.ClosedReason = history.ClosedBy(b.Events[0])
	commit(b)
	if _, err := s.PurgeRuns(ctx, []string{"rb"}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := searchEntries(t, s), []string{"amount=150 ra", `customer="ann" ra`}; !slices.Equal(got, want) {
		t.Fatalf("index after purging rb %q, want %q", got, want)
	}

	if problems, err := s.Check(); err != nil || len(problems) != 0 {
		t.Fatalf("check: %q %v", problems, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSearch).Delete(testSearchKey("customer", "ann", at, "ra"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s = openAt(t, path, Options{})
	eq, err1 := s.Runs(history.RunFilter{Search: []history.SearchCond{{Field: "customer", Op: "=", Value: "ann"}}})
	ne, err2 := s.Runs(history.RunFilter{Search: []history.SearchCond{{Field: "customer", Op: "!=", Value: "bob"}}})
	if err1 != nil || err2 != nil || len(eq) != 0 || len(ne) != 0 {
		t.Fatalf("with ra's entry gone: = lists %v (%v), != lists %v (%v); want none through the index", runIDs(eq), err1, runIDs(ne), err2)
	}
	problems, err := s.Check()
	if err != nil || len(problems) != 1 || problems[0] != `search index: entry run "ra", customer = "ann" is missing: its run is hidden from an equality filter on the field` {
		t.Fatalf("check with ra's entry gone: %q %v, want the missing entry named", problems, err)
	}
}

// searchEntries lists the search index as "field=value run" lines, sorted.
func searchEntries(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	err := s.readTx(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSearch)
		if b == nil {
			return nil
		}
		return forEach(b, func(k, v []byte) error {
			if err := readIndexEntry(k, v); err != nil {
				return err
			}
			field, val, _, id, ok := splitSearchKey(k)
			if !ok {
				return fmt.Errorf("malformed key %x", k)
			}
			out = append(out, field+"="+searchValueText(val)+" "+id)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// testSearchKey is the search index key of run id, started at started, whose field holds v.
func testSearchKey(field string, v any, started time.Time, id string) []byte {
	val, ok := searchValueKey(v)
	if !ok {
		panic(fmt.Sprintf("%v is of no search type", v))
	}
	return searchKey(field, val, started, id)
}

func runIDs(rs []history.Run) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.RunID)
	}
	return out
}

// BenchmarkRunsBySearch lists 20 runs among 20,000 by a search field, through the search
// index: an equality clause reads one value's entries, a range clause walks its span of the
// field's numbers; either reads the records of the runs it lists only.
func BenchmarkRunsBySearch(b *testing.B) {
	const runs, customers = 20_000, 1_000
	s, err := Open(filepath.Join(b.TempDir(), "wend.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for i := 0; i < runs; i += 500 {
		var c history.Commit
		for j := i; j < i+500; j++ {
			u := storetest.Started(fmt.Sprintf("w%d", j), fmt.Sprintf("r%d", j), at.Add(time.Duration(j)*time.Second))
			u.Run.Search = map[string]any{"customer": fmt.Sprintf("c%d", j%customers), "amount": float64(j)}
			c.Runs = append(c.Runs, u)
		}
		if err := s.Commit(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		cond history.SearchCond
		want int
	}{
		{"indexed equality", history.SearchCond{Field: "customer", Op: "=", Value: "c7"}, runs / customers},
		{"indexed range", history.SearchCond{Field: "amount", Op: "<", Value: "20"}, 20},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				got, err := s.Runs(history.RunFilter{Search: []history.SearchCond{bc.cond}})
				if err != nil || len(got) != bc.want {
					b.Fatalf("%d runs (%v), want %d", len(got), err, bc.want)
				}
			}
		})
	}
}
