//go:build unix

package crashtest

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
)

// TestQueuedRunsAcrossKills: runs of a workflow with `concurrency: {key, limit: 2}` are started
// through a real `wend serve`, most of them queued, and released by signals while the serve
// is killed with SIGKILL between steps and restarted; a signal to a queued run is kept in its
// queue entry until it starts. In the end every run completed (no acknowledged signal was
// lost), the runs
// of each key started in the order they were queued, and no more than 2 of a key ever ran at
// once (judged by the histories: a run runs from its WorkflowStarted to its terminal event).
func TestQueuedRunsAcrossKills(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	dir := t.TempDir()
	db, sock := filepath.Join(dir, "wend.db"), filepath.Join(dir, "wend.db.sock")
	wf := filepath.Join(dir, "keyed.wend.yaml")
	const limit = 2
	must(t, os.WriteFile(wf, []byte(fmt.Sprintf("wend: v1\nname: keyed\nconcurrency: {key: \"${{ input.c }}\", limit: %d}\n"+
		"steps: [{wait_for_signal: go}]\n", limit)), 0o644))
	seed := time.Now().UnixNano() % 100000
	rng := rand.New(rand.NewSource(seed))
	keys := map[string][]string{"ann": nil, "bob": nil} // workflow ids in start order
	var order []string
	for i := range 6 {
		order = append(order, fmt.Sprintf("ann-%d", i))
		if i < 4 {
			order = append(order, fmt.Sprintf("bob-%d", i))
		}
	}

	srv := startServe(t, wend, db, "")
	defer func() { _ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); _ = srv.Wait() }()
	waitSocket(t, srv, sock)
	restart := func() {
		time.Sleep(time.Duration(rng.Intn(100)) * time.Millisecond)
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
		srv = startServe(t, wend, db, "")
		waitSocket(t, srv, sock)
	}
	kills := 0
	for i, id := range order {
		key := id[:3]
		if out, err := exec.Command(wend, "run", "--detach", "--db", db, "--id", id, "--input", fmt.Sprintf(`{"c": %q}`, key), wf).CombinedOutput(); err != nil {
			t.Fatalf("start %s: %v\n%s", id, err, out)
		}
		keys[key] = append(keys[key], id) // acknowledged: durable from here on
		if i%3 == 2 {
			restart()
			kills++
		}
	}
	// Release runs: each round signals, for each key, one of its not yet released runs at
	// random, running or queued (so runs close out of order, and queued runs hold signals
	// across kills); a kill follows every second round.
	released := map[string]bool{}
	for round := 0; len(released) < len(order); round++ {
		if round > 400 {
			t.Fatalf("runs not released after %d rounds: %d of %d", round, len(released), len(order))
		}
		for _, ids := range keys {
			var open []string
			for _, id := range ids {
				if !released[id] {
					open = append(open, id)
				}
			}
			if len(open) == 0 {
				continue
			}
			id := open[rng.Intn(len(open))]
			if exec.Command(wend, "signal", "--db", db, id, "go").Run() == nil {
				released[id] = true
			}
		}
		if round%2 == 1 {
			restart()
			kills++
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	_ = syscall.Kill(srv.Process.Pid, syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("the last serve did not stop cleanly: %v\n%s", err, srv.Stderr())
	}
	// A last process drives what the last kill left (runs signalled, not yet closed).
	if out, err := exec.Command(wend, "resume", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}

	st, err := boltstore.Open(db, boltstore.Options{})
	must(t, err)
	defer st.Close()
	type span struct{ start, end time.Time }
	most := 0
	for key, ids := range keys {
		spans := make([]span, len(ids))
		for i, id := range ids {
			runs, err := st.Runs(history.RunFilter{WorkflowID: id})
			must(t, err)
			if len(runs) != 1 || runs[0].Status != history.StatusCompleted {
				t.Fatalf("%s: %+v, want one completed run", id, runs)
			}
			evs, err := st.Events(runs[0].RunID, 0)
			must(t, err)
			if ps := history.Check(runs[0], evs); len(ps) > 0 {
				t.Fatalf("%s: %v", id, ps)
			}
			spans[i] = span{evs[0].Time, evs[len(evs)-1].Time}
		}
		for i := 1; i < len(spans); i++ {
			if spans[i].start.Before(spans[i-1].start) {
				t.Errorf("key %s: %s started at %s, before %s, queued before it, at %s", key, ids[i],
					spans[i].start.Format(time.StampMicro), ids[i-1], spans[i-1].start.Format(time.StampMicro))
			}
		}
		for i, s := range spans {
			at := 0
			for _, o := range spans {
				if !o.start.After(s.start) && o.end.After(s.start) {
					at++
				}
			}
			most = max(most, at)
			if at > limit {
				t.Errorf("key %s: %d runs running when %s started, over the limit %d", key, at, ids[i], limit)
			}
		}
	}
	tasks, err := st.Tasks()
	must(t, err)
	if i := slices.IndexFunc(tasks, func(t history.Task) bool { return t.Kind == history.TaskQueued }); i >= 0 {
		t.Errorf("a queued task is left: %+v", tasks[i])
	}
	t.Logf("%d runs, %d kills, at most %d of a key at once, seed %d", len(order), kills, most, seed)
}
