package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/server"
)

// The remote List follows GET /v1/runs's pages to the last: more runs than one page holds
// come back whole, newest first, each once.
func TestClientListFollowsPages(t *testing.T) {
	store := history.NewMemStore()
	path := filepath.Join(t.TempDir(), "wend.db")
	u, err := server.ListenUnix(socketPath(path), server.New(nil, store))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	c, err := dialControl(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if runs, err := c.List(history.RunFilter{}); err != nil || runs == nil || len(runs) != 0 {
		t.Fatalf("empty store: %v (nil %v) %v", runs, runs == nil, err)
	}
	const n = 2*server.MaxListLimit + 3
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		up := storetest.Started(fmt.Sprintf("wf-%04d", i%7), fmt.Sprintf("run-%04d", i), t0.Add(time.Duration(i)*time.Second))
		if i%3 == 0 {
			up.Run.Status = history.StatusCompleted
		}
		if err := store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{up}}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := c.List(history.RunFilter{})
	if err != nil || len(runs) != n {
		t.Fatalf("list: %d runs, want %d: %v", len(runs), n, err)
	}
	for i, r := range runs {
		if want := fmt.Sprintf("run-%04d", n-1-i); r.RunID != want {
			t.Fatalf("run %d is %s, want %s", i, r.RunID, want)
		}
	}
	done, err := c.List(history.RunFilter{Status: history.StatusCompleted, WorkflowID: "wf-0000"})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := range n {
		if i%3 == 0 && i%7 == 0 {
			want++
		}
	}
	if len(done) != want {
		t.Fatalf("filtered list: %d runs, want %d", len(done), want)
	}
}
