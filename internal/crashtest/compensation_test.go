//go:build unix

package crashtest

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/proctest"
)

// TestCompensationsAcrossKills is docs/reliability.md F3: a 10-step saga is cancelled, then the
// process compensating it is killed at a failpoint after an early commit, again and again,
// and resumed. Every compensation must be recorded exactly once, in reverse completion
// order, and each must have reached the plugin at least once.
func TestCompensationsAcrossKills(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, plugin := bins(t)
	dir := t.TempDir()
	db, log := filepath.Join(dir, "wend.db"), filepath.Join(dir, "inv.jsonl")
	const n = 10
	var b strings.Builder
	fmt.Fprintf(&b, "wend: v1\nname: saga\nplugins: {demo: %q}\nsteps:\n", plugin)
	for i := range n {
		fmt.Fprintf(&b, "  - {id: s%d, activity: demo.record, with: {path: %q, note: \"do%d\"}, compensate_with: {activity: demo.record, with: {path: %q, note: \"undo%d\"}}}\n", i, log, i, log, i)
	}
	b.WriteString("  - wait_for_signal: never\n")
	wf := filepath.Join(dir, "saga.wend.yaml")
	if err := os.WriteFile(wf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) error {
		out, err := exec.Command(wend, append(args, "--db", db)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("wend %v: %v\n%s", args, err, out)
		}
		return nil
	}
	if err := run("run", "--detach", "--id", "saga", wf); err != nil {
		t.Fatal(err)
	}
	serve := func(failpoints string) *served { return startServe(t, wend, db, failpoints) }
	srv := serve("")
	waitSocket(t, srv, db+".sock")
	// Kill only once the history holds all n completions. The plugin's log has a step's line
	// before its completion is committed: killing when the log had n lines left the last
	// completion unrecorded now and then on a loaded machine, so the cancelling process below
	// first committed that step's redelivery, died at its failpoint before answering on the
	// socket, and the cancel never reached the run.
	for deadline := time.Now().Add(60 * time.Second); historyCount(t, wend, db, "saga", history.ActivityCompleted) < n; {
		if time.Now().After(deadline) {
			t.Fatal("the saga's steps never all completed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
	_ = srv.Wait()
	// The cancel goes to a process that dies right after committing it, so no compensation
	// runs before the kill loop: killing a live server after the cancel's answer let it run
	// a few first (more on a loaded machine), and the loop then had fewer left to crash in.
	canceller := serve("after-commit=1")
	waitSocket(t, canceller, db+".sock")
	_ = run("cancel", "saga", "--reason", "crash test") // may lose its answer to the crash
	if code := exitCode(canceller.Wait()); code != 137 {
		t.Fatalf("the cancelling process exited %d, want the failpoint's 137; its stderr:\n%s", code, canceller.Stderr())
	}
	if done, cancelled := sagaProgress(t, db); !cancelled || done != 0 {
		t.Fatalf("after the cancel's commit: cancelled %v, %d compensations done; want true, 0", cancelled, done)
	}

	seed := time.Now().UnixNano() % 100000
	rng := rand.New(rand.NewSource(seed))
	kills := 0
	// Each round starts a process only while the run is open, and judges that from the
	// history: a process that outlives its failpoint for the hang guard is killed and the loop
	// goes on unless the run has closed. (A fixed 3 s silence used to mean "closed"; a process
	// slower than that on a loaded machine ended the loop with compensations left to run.)
	for round := 0; round < 60 && !sagaClosed(t, db); round++ {
		// Die right after the second commit: each process moves the unwinding one step, so the
		// crashes land between every pair of compensations. (The first commit records that the
		// compensation the previous process had handed to the plugin was interrupted, and marks
		// its redelivery; the second records the redelivery's outcome: docs/reliability.md,
		// "Redelivery after a crash". Dying after the first would never let a call start.)
		fp := "after-commit=2"
		if rng.Intn(4) == 0 {
			fp = "before-commit=2" // now and then, before it instead: after the call
		}
		cmd := serve(fp)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if exitCode(err) == 137 {
				kills++
			}
		case <-time.After(30 * time.Second): // fewer than two commits were left to make
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(history.RunFilter{WorkflowID: "saga"})
	evs, err := st.Events(runs[0].RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	started := map[string]int{}
	for _, e := range evs {
		switch e.Type {
		case history.CompensationCompleted:
			order = append(order, e.Step)
		case history.CompensationStarted:
			started[e.Step]++
		}
	}
	var want []string
	for i := n - 1; i >= 0; i-- {
		want = append(want, fmt.Sprintf("steps[%d]", i))
	}
	dup := 0
	for _, c := range started {
		dup += c - 1
	}
	inv := proctest.LoadInvocations(t, log)
	skipped := 0
	for i := range n {
		if len(inv[fmt.Sprintf("undo%d", i)]) == 0 {
			skipped++
		}
	}
	fmt.Printf("RELIABILITY suite=compensation crashes=%d compensated=%d dup_compensation_in_history=%d skipped=%d undo_invocations=%d seed=%d\n",
		kills, len(order), dup, skipped, countPrefix(inv, "undo"), seed)
	if runs[0].Status != history.StatusCancelled || strings.Join(order, ",") != strings.Join(want, ",") || dup != 0 || skipped != 0 {
		t.Fatalf("run %s; compensated %v, want %v; dup %d, skipped %d", runs[0].Status, order, want, dup, skipped)
	}
	if ps := history.Check(runs[0], evs); len(ps) > 0 {
		t.Fatal(ps)
	}
	if kills < n-1 {
		t.Fatalf("only %d kills during %d compensations", kills, n)
	}
}

// sagaProgress reads the saga's history from a closed database: whether its cancel is
// recorded and how many compensations completed.
func sagaProgress(t *testing.T, db string) (done int, cancelled bool) {
	t.Helper()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(history.RunFilter{WorkflowID: "saga"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("saga runs %v: %v", runs, err)
	}
	evs, err := st.Events(runs[0].RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		switch e.Type {
		case history.CancelRequested:
			cancelled = true
		case history.CompensationCompleted:
			done++
		}
	}
	return done, cancelled
}

// sagaClosed reports, from a database no process holds, whether the saga's run has closed.
func sagaClosed(t *testing.T, db string) bool {
	t.Helper()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(history.RunFilter{WorkflowID: "saga"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("saga runs %v: %v", runs, err)
	}
	return runs[0].Status != history.StatusRunning
}

func countPrefix(m map[string][]proctest.Invocation, prefix string) int {
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			n += len(v)
		}
	}
	return n
}

// historyCount asks the wend process serving db (through `wend history`) how many events of
// type typ the newest run of workflow id holds.
func historyCount(t *testing.T, wend, db, id string, typ history.EventType) int {
	t.Helper()
	out, err := exec.Command(wend, "history", id, "--json", "--db", db).Output()
	if err != nil {
		t.Fatalf("wend history %s: %v", id, err)
	}
	var doc struct {
		Events []struct {
			Type history.EventType `json:"type"`
		} `json:"history_events"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("wend history %s: %v", id, err)
	}
	c := 0
	for _, e := range doc.Events {
		if e.Type == typ {
			c++
		}
	}
	return c
}

// waitSocket waits until srv answers on the database's control socket, so a command sent
// next goes to it rather than opening the database itself; see socketAnswer.
func waitSocket(t *testing.T, srv *served, path string) {
	t.Helper()
	if err := socketAnswer(srv, path, 60*time.Second); err != nil {
		t.Fatal(err)
	}
}

// socketAnswer waits up to limit until srv answers on path. If srv exits first it returns at
// once, with srv's exit code and stderr: the socket file a killed process left behind
// refuses every dial, and waiting on it would only hide why srv never listened.
func socketAnswer(srv *served, path string, limit time.Duration) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for {
		c, err := net.Dial("unix", path)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-srv.exited:
			return fmt.Errorf("wend serve exited %d before it answered on %s; its stderr:\n%s", exitCode(srv.Wait()), path, srv.Stderr())
		case <-deadline:
			return fmt.Errorf("wend serve (pid %d) did not answer on %s: %v; its stderr so far:\n%s", srv.Process.Pid, path, err, srv.Stderr())
		case <-tick.C:
		}
	}
}
