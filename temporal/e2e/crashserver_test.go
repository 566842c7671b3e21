//go:build unix

package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wendflow/wend/temporal/e2e/devserver"
	"github.com/wendflow/wend/testkit/proctest"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// TestCrashServerKilled SIGKILLs the process holding the Temporal server (wend-temporal-dev
// on a SQLite file) while three runs execute, five times, restarting it on the same file and
// port; the worker stays up and reconnects. Every run must complete with the invariants of
// TestCrashWorkerKilled: what the server committed before a kill is what the runs go on from.
func TestCrashServerKilled(t *testing.T) {
	const kills = 5
	seed := time.Now().UnixNano() % 100000
	if s := os.Getenv("WEND_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d (WEND_CRASH_SEED=%d to repeat)", seed, seed)

	dir := t.TempDir()
	// Restarts reuse the port, so it must lie outside the ephemeral range: the worker's
	// reconnects would otherwise be free to take it as their local port while the server is down.
	port, err := devserver.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	db := filepath.Join(dir, "server.db")
	startServer := func() *proc {
		return startProc(t, "listening on "+addr, env.devServer, "--port", strconv.Itoa(port), "--db", db)
	}
	srv := startServer()
	defer func() { srv.kill() }()

	log := filepath.Join(dir, "invocations.jsonl")
	const queue = "e2e-server-crash"
	// Long enough (about 1,200 wend events a run) that the kills land while runs are open.
	const seqSteps, fanSteps = 250, 50
	w := startWorkerAt(t, addr, queue, filepath.Join(dir, "worker"))
	var ids []string
	for i := range 3 {
		name := fmt.Sprintf("srvcrash%d", i)
		f := crashFlow(t, dir, name, log, seqSteps, fanSteps)
		id := "e2e-" + name
		if res := cli(t, time.Minute, env.wendTemporal, "run", f, "--id", id, "--detach", "--temporal", addr, "--task-queue", queue); res.code != 0 {
			t.Fatalf("%s: wend run --detach exited %d: %s", id, res.code, res.stderr)
		}
		ids = append(ids, id)
	}
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	open := func(id string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		return err == nil && d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}
	whileOpen := 0 // kills that hit a server with the last run still open
	for range kills {
		time.Sleep(time.Duration(100+rng.Intn(700)) * time.Millisecond)
		if open(ids[len(ids)-1]) {
			whileOpen++
		}
		srv.kill()
		srv = startServer()
	}
	if whileOpen == 0 {
		t.Fatalf("every kill came after the runs closed: the test killed nothing that mattered")
	}

	// Wait for every run to close; calls fail while the server restarts, so poll.
	deadline := time.Now().Add(10 * time.Minute)
	for _, id := range ids {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			cancel()
			if err == nil && d.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				if st := d.WorkflowExecutionInfo.Status; st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
					t.Errorf("%s closed %v", id, st)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still open 10 minutes after the last kill (last error %v); worker:\n%s", id, err, w.stderr.String())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	inv := proctest.LoadInvocations(t, log)
	var tally crashTally
	for _, id := range ids {
		checkCrashRun(t, exportOf(t, addr, id), inv, seqSteps+fanSteps, kills, &tally)
	}
	w.stop(t)
	orphans := proctest.Running(env.demo, 5*time.Second)
	fmt.Printf("RELIABILITY suite=temporal-server-crash kills=%d kills_while_open=%d runs=%d events=%d events_lost=%d dup_history=%d invocations=%d exec_id_mismatches=%d orphans=%d seed=%d\n",
		kills, whileOpen, len(ids), tally.events, tally.lost, tally.dups, proctest.CountInvocations(inv), tally.idMismatch, orphans, seed)
	if orphans > 0 {
		t.Errorf("%d plugin processes outlived the worker", orphans)
	}
}
