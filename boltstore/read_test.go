package boltstore

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestReadsOutliveRemap (RELIABILITY A9): what reads return is copied out of the mmap, so it
// stays intact after its transaction ends and after later commits grow and remap the file.
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
