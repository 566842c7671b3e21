package boltstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestDispatchMarkStored: a task's dispatch mark survives a reopen, can be
// written by a commit that holds only tasks, and a task never marked reads as unmarked.
func TestDispatchMarkStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	ctx := context.Background()
	task := history.Task{ID: "r1/exec#1", RunID: "r1", Kind: history.TaskActivity, AvailableAt: t0, Data: []byte(`{"attempt":1}`)}
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r1", t0)}, PutTasks: []history.Task{task}}))
	if ts, err := s.Tasks(); err != nil || len(ts) != 1 || ts[0].Dispatched {
		t.Fatalf("before the mark: %+v %v", ts, err)
	}
	task.Dispatched = true
	must(t, s.Commit(ctx, history.Commit{PutTasks: []history.Task{task}}))
	must(t, s.Close())
	s = openAt(t, path, Options{})
	ts, err := s.Tasks()
	if err != nil || len(ts) != 1 || !ts[0].Dispatched || string(ts[0].Data) != `{"attempt":1}` {
		t.Fatalf("after a reopen: %+v %v", ts, err)
	}
	if ps, err := s.Check(); err != nil || len(ps) != 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}
