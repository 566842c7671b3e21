package boltstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// searchRunValues are run search values chosen to sit at the index's edges: -0 and 0, numbers
// either side of zero and far out, text with NUL bytes and shared prefixes, text that reads as
// a number, a bool or a date but is text, times in other zones and with fractions, before 1970.
var searchRunValues = []any{
	0.0, math.Copysign(0, -1), 1.0, -1.0, 1.5, -1.5, 10.0, 2.0, 1e300, -1e-300, 150.0,
	"", "a", "a\x00", "a\x00b", "ab", "b", "10", "true", "ann", "2026-05-01",
	"2026-05-01T08:00:00Z", "2026-05-01T10:00:00+02:00", "2026-05-01T08:00:00.5Z",
	"1969-12-31T23:59:59.999999999Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
	true, false,
}

// searchClauseValues are clause values: the run values' texts and what parses oddly.
var searchClauseValues = []string{
	"0", "-0", "1", "-1", "1.5", "-1.5", "10", "10.0", "2", "1e300", "1e400", "-1e-300", "150",
	"nan", "NaN", "inf", "-Inf", "0x1p4", "", "a", "a\x00", "ab", "b", "ann", "true", "t", "f", "false",
	"2026-05-01", "2026-05-01T08:00:00Z", "2026-05-01T08:00:00.5Z", "2026-05-01T10:00:00+02:00",
	"1969-12-31T23:59:59.999999999Z", "1970-01-01", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
}

// seedSearchRuns commits n runs whose fields f0..f2 hold values drawn from searchRunValues
// (some runs lack a field), started a second apart.
func seedSearchRuns(t testing.TB, s *Store, rng *rand.Rand, n int) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	var c history.Commit
	for i := range n {
		u := storetest.Started(fmt.Sprintf("w%d", i), fmt.Sprintf("r%d", i), at.Add(time.Duration(i%17)*time.Second))
		u.Run.Search = map[string]any{}
		for _, f := range []string{"f0", "f1", "f2"} {
			if rng.IntN(5) > 0 {
				u.Run.Search[f] = searchRunValues[rng.IntN(len(searchRunValues))]
			}
		}
		c.Runs = append(c.Runs, u)
	}
	if err := s.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// scanned is what a scan of every record says f lists, newest first.
func scanned(t testing.TB, s *Store, f history.RunFilter) []string {
	var out []history.Run
	err := s.scanRuns(func(r history.Run) {
		if f.Match(r) {
			out = append(out, r)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	history.SortRuns(out)
	return runIDs(out)
}

// pagedSearch lists f through SearchNewest, page after page of size want, following the
// position of each page's last run as GET /v1/runs's cursor does.
func pagedSearch(t testing.TB, s *Store, f history.RunFilter, want int) ([]string, bool) {
	var out []string
	var afterT time.Time
	afterID := ""
	for {
		runs, end, ok, err := s.SearchNewest(f, afterT, afterID, want, func(history.Run) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return nil, false
		}
		out = append(out, runIDs(runs)...)
		if end || len(runs) < want {
			if !end {
				t.Fatalf("SearchNewest kept %d of %d and says more follow", len(runs), want)
			}
			return out, true
		}
		last := runs[len(runs)-1]
		afterT, afterID = last.StartedAt, last.RunID
	}
}

// checkIndexWalk asserts that Runs (through the index) and SearchNewest's pages list exactly
// the runs a scan of the records does, in the same order, for the clause field op value.
func checkIndexWalk(t testing.TB, s *Store, field, op, value string, page int) {
	f := history.RunFilter{Search: []history.SearchCond{{Field: field, Op: op, Value: value}}}
	want := scanned(t, s, f)
	got, err := s.Runs(f)
	if err != nil {
		t.Fatal(err)
	}
	if ids := runIDs(got); !slices.Equal(ids, want) {
		t.Fatalf("%s %s %q: the index lists %v, a scan %v", field, op, value, ids, want)
	}
	paged, ok := pagedSearch(t, s, f, page)
	if !ok {
		t.Fatalf("%s %s %q: SearchNewest cannot serve it", field, op, value)
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("%s %s %q: pages of %d list %v, a scan %v", field, op, value, page, paged, want)
	}
}

// TestSearchIndexWalkMatchesScan: for every operator and every clause value, the runs a
// search clause lists through the index, whole (Runs) and page by page (SearchNewest), are
// exactly those a scan of the records matches, in the same order.
func TestSearchIndexWalkMatchesScan(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "wend.db"), Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	seedSearchRuns(t, s, rng, 300)
	for _, op := range history.SearchOps {
		for _, v := range searchClauseValues {
			checkIndexWalk(t, s, "f"+fmt.Sprint(rng.IntN(3)), op, v, 1+rng.IntN(40))
		}
	}
	checkIndexWalk(t, s, "missing", "!=", "a", 10)
}

// FuzzSearchIndexWalk: any clause value and operator lists through the index what a scan
// lists.
func FuzzSearchIndexWalk(f *testing.F) {
	for i, v := range searchClauseValues {
		f.Add(uint8(i), v, uint8(i))
	}
	s, err := Open(filepath.Join(f.TempDir(), "wend.db"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	seedSearchRuns(f, s, rand.New(rand.NewPCG(3, 4)), 200)
	f.Fuzz(func(t *testing.T, op uint8, value string, page uint8) {
		ops := history.SearchOps
		checkIndexWalk(t, s, "f"+fmt.Sprint(op%3), ops[int(op)%len(ops)], value, 1+int(page%50))
	})
}

// TestSearchIndexBuiltFromUnsorted: a database with the earlier, unsorted search index is
// listed from its records while opened for reading, and gets the sorted index, made from its
// records, at its next Open for writing, the earlier one gone; wend check is then clean.
func TestSearchIndexBuiltFromUnsorted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	seedSearchRuns(t, s, rand.New(rand.NewPCG(5, 6)), 50)
	f := history.RunFilter{Search: []history.SearchCond{{Field: "f0", Op: ">", Value: "1"}}}
	want := scanned(t, s, f)
	must(t, s.Close())
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketSearch); err != nil {
			return err
		}
		b, err := tx.CreateBucket(bucketSearchUnsorted)
		if err != nil {
			return err
		}
		return b.Put([]byte("\x02f0sann r1"), indexEntry([]byte("\x02f0sann r1")))
	}))
	must(t, db.Close())

	r := openAt(t, path, Options{ReadOnly: true})
	got, err := r.Runs(f)
	if err != nil || !slices.Equal(runIDs(got), want) {
		t.Fatalf("read-only, unsorted index: %v %v, want %v", runIDs(got), err, want)
	}
	if ps, err := r.Check(); err != nil || len(ps) != 0 {
		t.Fatalf("check, read-only, unsorted index: %q %v", ps, err)
	}
	must(t, r.Close())

	s = openAt(t, path, Options{})
	checkIndexWalk(t, s, "f0", ">", "1", 7)
	err = s.readTx(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketSearchUnsorted) != nil || tx.Bucket(bucketSearch) == nil {
			return fmt.Errorf("after Open for writing: unsorted %v, sorted %v", tx.Bucket(bucketSearchUnsorted) != nil, tx.Bucket(bucketSearch) != nil)
		}
		return nil
	})
	must(t, err)
	if ps, err := s.Check(); err != nil || len(ps) != 0 {
		t.Fatalf("check after the build: %q %v", ps, err)
	}
}
