package boltstore

import (
	"os"
	"path/filepath"
	"testing"

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
