package boltstore

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestReadsOutliveRemap (docs/reliability.md A9): what reads return is copied out of the mmap, so
// it stays intact after its transaction ends and after later commits grow and remap the file.
func TestReadsOutliveRemap(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "wend.db"), Options{InitialMmapSize: 64 << 10})
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	r := u.Run
	var kept []history.Event
	var keptTasks []history.Task
	for i := range 40 {
		n := storetest.Next(r, history.ActivityCompleted, 1)
		n.Events[0].Data = payload(50_000 + i) // grows the file: several remaps
		task := history.Task{ID: "t", RunID: "r1", Data: payload(i)}
		must(t, s.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{n}, PutTasks: []history.Task{task}}))
		r = n.Run
		evs, err := s.Events("r1", r.LastSeq-1)
		must(t, err)
		ts, err := s.Tasks()
		must(t, err)
		kept, keptTasks = append(kept, evs...), append(keptTasks, ts...)
		runtime.GC()
	}
	for i, e := range kept {
		if want := payload(50_000 + i); !bytes.Equal(e.Data, want) || e.Seq != uint64(i+2) {
			t.Fatalf("event %d read earlier changed after later commits", e.Seq)
		}
		if want := payload(i); !bytes.Equal(keptTasks[i].Data, want) {
			t.Fatalf("task read after commit %d changed after later commits", i)
		}
	}
}

// TestEventsInChunks: a history longer than readChunk is read in several transactions and comes
// back whole and in order, from any seq, as from one.
func TestEventsInChunks(t *testing.T) {
	s := openTemp(t)
	const size, perCommit = 8000, 64
	r := longHistory(t, s, "r1", func(i int) []byte { return payload(size + i) })
	first, more, err := s.eventChunk("r1", seqKey(1), nil)
	must(t, err)
	if !more || len(first) < 2 {
		t.Fatalf("first chunk of %d events of %d (more=%v): the history is not read in chunks", len(first), r.LastSeq, more)
	}
	for _, after := range []uint64{0, 1, uint64(len(first)), uint64(len(first)) + 1, r.LastSeq - 1, r.LastSeq} {
		evs, err := s.Events("r1", after)
		must(t, err)
		if uint64(len(evs)) != r.LastSeq-after {
			t.Fatalf("Events after %d: %d events, want %d", after, len(evs), r.LastSeq-after)
		}
		for i, e := range evs {
			seq := after + uint64(i) + 1
			if e.Seq != seq || seq > 1 && !bytes.Equal(e.Data, payload(size+int(seq-2)%perCommit)) {
				t.Fatalf("Events after %d: event %d is seq %d with %d bytes of data", after, seq, e.Seq, len(e.Data))
			}
		}
	}
}

// longHistory commits run id with more than two readChunks of events, 64 to a commit of 8,000
// bytes or so each, the i-th of a commit carrying data(i), and returns the run's record.
func longHistory(t *testing.T, s *Store, id string, data func(i int) []byte) history.Run {
	t.Helper()
	u := storetest.Started("wf", id, t0)
	commitRun(t, s, u)
	r := u.Run
	const size, perCommit = 8000, 64
	for range 2*readChunk/(size*perCommit) + 1 {
		n := storetest.Next(r, history.ActivityCompleted, perCommit)
		for i := range n.Events {
			n.Events[i].Data = data(i)
		}
		commitRun(t, s, n)
		r = n.Run
	}
	return r
}
