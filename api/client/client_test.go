package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/api/client"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/server"
)

// overSocket serves store on a unix socket, as a wend process holding a database does, and
// returns a client of it.
func overSocket(t *testing.T, store history.Store) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "wend.db.sock")
	u, err := server.ListenUnix(sock, server.New(nil, store))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	c := client.Unix(sock)
	t.Cleanup(func() { c.Close() })
	return c
}

func ids(runs []history.Run) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.RunID)
	}
	return out
}

// List follows GET /v1/runs's pages to the last: more runs than one page holds come back
// whole, newest first, each once; a limit stops it early, on a page boundary or not.
func TestListFollowsPages(t *testing.T) {
	store := history.NewMemStore()
	c := overSocket(t, store)
	if runs, err := c.List(api.ListQuery{}, 0); err != nil || runs == nil || len(runs) != 0 {
		t.Fatalf("empty store: %v (nil %v) %v", runs, runs == nil, err)
	}
	const n = 2*api.MaxListLimit + 3
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		up := storetest.Started(fmt.Sprintf("wf-%04d", i%7), fmt.Sprintf("run-%04d", i), t0.Add(time.Duration(i)*time.Second))
		up.Run.Name = "w"
		if i%3 == 0 {
			up.Run.Status = history.StatusCompleted
		}
		if err := store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{up}}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := c.List(api.ListQuery{}, 0)
	if err != nil || len(runs) != n {
		t.Fatalf("list: %d runs, want %d: %v", len(runs), n, err)
	}
	for i, r := range runs {
		if want := fmt.Sprintf("run-%04d", n-1-i); r.RunID != want {
			t.Fatalf("run %d is %s, want %s", i, r.RunID, want)
		}
	}
	done, err := c.List(api.ListQuery{Status: history.StatusCompleted, WorkflowID: "wf-0000"}, 0)
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
	for _, limit := range []int{1, api.MaxListLimit, api.MaxListLimit + 1, n - 1, n, n + 5} {
		rem, err := c.List(api.ListQuery{}, limit)
		if err != nil || len(rem) != min(limit, n) || !slices.Equal(ids(rem), ids(runs[:len(rem)])) {
			t.Fatalf("limit %d: %d runs, want the newest %d: %v", limit, len(rem), min(limit, n), err)
		}
	}
}

// The run methods reach server.Server's over the socket: what one stores, another reads, and
// the server's errors keep their sentinels.
func TestRunMethodsOverTheSocket(t *testing.T) {
	store := history.NewMemStore()
	up := storetest.Started("order-1", "r1", time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	if err := store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{up}}); err != nil {
		t.Fatal(err)
	}
	c := overSocket(t, store)
	d, err := c.Show("order-1")
	if err != nil || d.Run.RunID != "r1" {
		t.Fatalf("show: %+v %v", d.Run, err)
	}
	if _, err := c.Show("nosuch"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("show of an unknown run: %v, want history.ErrNotFound", err)
	}
	if _, err := c.Events("order-1", 0); err != nil {
		t.Fatalf("events: %v", err)
	}
	// A server without an engine cannot check: its refusal comes back as the server's error.
	var se *api.Error
	if _, err := c.Check(); !errors.As(err, &se) || !strings.Contains(se.Message, "no engine drives this database") {
		t.Fatalf("check without an engine: %#v", err)
	}
}

// A connection that breaks is an error naming the peer and the socket; a body cut short of
// its Content-Length is a failed backup, not a short copy.
func TestConnectionErrorsNameThePeer(t *testing.T) {
	dir := t.TempDir()
	c := client.Unix(filepath.Join(dir, "none.sock"))
	c.Peer = "the wend process holding the database (pid 41)"
	_, err := c.Show("r1")
	if err == nil || !strings.HasPrefix(err.Error(), "talk to the wend process holding the database (pid 41) over "+filepath.Join(dir, "none.sock")+": ") {
		t.Fatalf("no socket: %v", err)
	}

	sock := filepath.Join(dir, "s.sock")
	u, err := server.ListenUnix(sock, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write(make([]byte, 4096))
		panic(http.ErrAbortHandler)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var buf bytes.Buffer
	if _, err := client.Unix(sock).Backup(&buf); err == nil || !strings.Contains(err.Error(), "receive the copy from wend") {
		t.Fatalf("a copy cut short: %v", err)
	}
}
