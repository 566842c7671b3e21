package boltstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestCheckInChunks (docs/reliability.md A8): Check reads a run's history as Events does, in
// chunks each copied out of its own short read transaction, so no transaction spans a history
// longer than readChunk. Between two chunks bbolt counts no open reader, and a commit made there,
// one that grows the file past the mmap and so must remap (which waits for every open reader),
// completes while the check is half-way through the run it appends to. The check, reading the
// history the run's record was read with, finds nothing.
func TestCheckInChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	// A small mmap: the file is mapped to the power of two above its size, and grown to it.
	s := openAt(t, path, Options{InitialMmapSize: 64 << 10})
	const size = 8000
	r := longHistory(t, s, "r1", func(int) []byte { return payload(size) })
	checked := r.LastSeq

	between, remapped := 0, false
	testHookChunk = func(runID string) {
		between++
		if n := s.db.Stats().OpenTxN; n != 0 {
			t.Errorf("between two chunks of run %s, %d read transactions are open", runID, n)
			return // a commit that remaps would wait for them for ever
		}
		if between > 1 {
			return
		}
		// The mmap is under twice the file's size, the file at most the mmap: a file grown past
		// twice its size was remapped.
		before := fileSize(t, path)
		n := storetest.Next(r, history.ActivityCompleted, int(2*before/(64<<10))+1)
		for i := range n.Events {
			n.Events[i].Data = payload(64 << 10)
		}
		commitRun(t, s, n)
		r = n.Run
		remapped = fileSize(t, path) > 2*before
	}
	t.Cleanup(func() { testHookChunk = func(string) {} })

	ps, err := s.Check()
	must(t, err)
	if len(ps) > 0 {
		t.Errorf("check with a commit between its chunks: %q", ps)
	}
	if between < 2 {
		t.Fatalf("Check read the %d events (%d bytes each) of run r1 in %d chunks, want 3 or more", checked, size, between+1)
	}
	if !remapped {
		t.Errorf("the commit made between two chunks did not grow the file past the mmap")
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	must(t, err)
	return fi.Size()
}

// Check reads the workflow index, the run records and the search index in slices, each a
// short read: between two slices no read is open, and commits made there, each one that
// changes what an earlier slice read (a run added to a workflow whose head was read, a run
// added before the runs read so far, a run's search value changed after its record was read),
// complete while the check is midway; the check reports no difference they did not make.
func TestCheckIndexesInSlices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	var c history.Commit
	for i := range keySliceLen + 10 {
		u := storetest.Started("big", fmt.Sprintf("r%05d", i), t0)
		u.Run.Search = map[string]any{"customer": "ann"}
		c.Runs = append(c.Runs, u)
	}
	must(t, s.Commit(context.Background(), c))
	r1 := c.Runs[1].Run
	commits := map[string]history.RunUpdate{}
	late := storetest.Started("big", "r99999", t0) // a run of big, after the slice boundary
	late.Run.Search = map[string]any{"customer": "cy"}
	commits[string(bucketWorkflows)] = late
	early := storetest.Started("early", "a0", t0) // a record before those read
	early.Run.Search = map[string]any{"customer": "dee"}
	commits[string(bucketRuns)] = early
	changed := storetest.Next(r1, history.ActivityScheduled, 1) // after its record was read
	changed.Run.Search = map[string]any{"customer": "bob"}
	commits[string(bucketSearch)] = changed

	between := map[string]int{}
	testHookSlice = func(bucket string) {
		between[bucket]++
		if n := s.db.Stats().OpenTxN; n != 0 {
			t.Errorf("between two slices of %s, %d read transactions are open", bucket, n)
		}
		u, ok := commits[bucket]
		if !ok {
			return
		}
		delete(commits, bucket)
		done := make(chan error, 1)
		go func() { done <- s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}) }()
		select {
		case err := <-done:
			must(t, err)
		case <-time.After(time.Minute):
			t.Fatalf("a commit waited for the check's read of %s", bucket)
		}
	}
	t.Cleanup(func() { testHookSlice = func(string) {} })
	ps, err := s.Check()
	must(t, err)
	if len(ps) > 0 {
		t.Errorf("check with commits between its slices: %q", ps)
	}
	if len(commits) > 0 {
		t.Errorf("no slice boundary in %v: between slices %v", commits, between)
	}
	testHookSlice = func(string) {}
	// A difference across a slice boundary is still found: big's head counts one run too few.
	must(t, s.Close())
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWorkflows).Delete(workflowKey("big", "r00002"))
	}))
	must(t, db.Close())
	s = openAt(t, path, Options{})
	ps, err = s.Check()
	must(t, err)
	want := []string{"run r00002: missing from the workflow index", fmt.Sprintf(`workflow index: "big" counts %d run(s), %d indexed`, keySliceLen+11, keySliceLen+10)}
	if !slices.Equal(ps, want) {
		t.Errorf("check: %q, want %q", ps, want)
	}
}
