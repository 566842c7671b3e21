package commands

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/server"
)

// listBackends serves store on a control socket and returns a local backend over it and a
// client of the socket, the two ways `wend list` reads runs.
func listBackends(t *testing.T, store history.Store) (local, *client) {
	t.Helper()
	srv := server.New(nil, store)
	path := filepath.Join(t.TempDir(), "wend.db")
	u, err := server.ListenUnix(socketPath(path), srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	c, err := dialControl(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return local{srv, func() error { return nil }}, c
}

// putRun stores a run of workflow wf named name, with status, started at at.
func putRun(t *testing.T, store history.Store, wf, runID, name, status string, at time.Time) {
	t.Helper()
	up := storetest.Started(wf, runID, at)
	up.Run.Name, up.Run.Status = name, status
	if err := store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{up}}); err != nil {
		t.Fatal(err)
	}
}

func listIDs(runs []history.Run) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.RunID)
	}
	return out
}

// Both backends list the same runs for the same filters and limit: the local one applies
// api.ListQuery.Match itself, the remote one asks GET /v1/runs.
func TestListBackendsAgree(t *testing.T) {
	store := history.NewMemStore()
	loc, c := listBackends(t, store)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	// r0 oldest to r5 newest, a minute apart.
	for i, r := range []struct{ wf, name, status string }{
		{"order-A1", "billing", history.StatusCompleted},
		{"order-a2", "billing", history.StatusRunning},
		{"Ship-1", "shipping", history.StatusFailed},
		{"ship-2", "shipping", history.StatusRunning},
		{"other", "billing", history.StatusCancelled},
		{"ORDER-b", "shipping", history.StatusRunning},
	} {
		putRun(t, store, r.wf, fmt.Sprintf("r%d", i), r.name, r.status, t0.Add(time.Duration(i)*time.Minute))
	}
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	tests := []struct {
		name  string
		q     api.ListQuery
		limit int
		want  []string
	}{
		{"all", api.ListQuery{}, 0, []string{"r5", "r4", "r3", "r2", "r1", "r0"}},
		{"status", api.ListQuery{Status: history.StatusRunning}, 0, []string{"r5", "r3", "r1"}},
		{"workflow id", api.ListQuery{WorkflowID: "ship-2"}, 0, []string{"r3"}},
		{"name", api.ListQuery{Name: "billing"}, 0, []string{"r4", "r1", "r0"}},
		{"name is exact", api.ListQuery{Name: "bill"}, 0, []string{}},
		{"q any case", api.ListQuery{Q: "ORDER"}, 0, []string{"r5", "r1", "r0"}},
		{"q in the run id", api.ListQuery{Q: "R4"}, 0, []string{"r4"}},
		{"started after is inclusive", api.ListQuery{StartedAfter: at(3)}, 0, []string{"r5", "r4", "r3"}},
		{"started before is exclusive", api.ListQuery{StartedBefore: at(2)}, 0, []string{"r1", "r0"}},
		{"a range in another zone", api.ListQuery{StartedAfter: at(1).In(time.FixedZone("", 2*3600)), StartedBefore: at(4).Add(-time.Nanosecond)}, 0, []string{"r3", "r2", "r1"}},
		{"limit keeps the newest", api.ListQuery{}, 2, []string{"r5", "r4"}},
		{"limit after filters", api.ListQuery{Name: "shipping", Q: "s"}, 1, []string{"r3"}},
		{"limit above the matches", api.ListQuery{Status: history.StatusRunning}, 10, []string{"r5", "r3", "r1"}},
		{"everything at once", api.ListQuery{Status: history.StatusRunning, Name: "shipping", Q: "b", StartedAfter: at(0), StartedBefore: at(6)}, 1, []string{"r5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range []backend{loc, c} {
				runs, err := b.List(tt.q, tt.limit)
				if err != nil || runs == nil {
					t.Fatalf("%T: %v (nil %v)", b, err, runs == nil)
				}
				if got := listIDs(runs); !slices.Equal(got, tt.want) {
					t.Fatalf("%T: runs %v, want %v", b, got, tt.want)
				}
			}
		})
	}
}
