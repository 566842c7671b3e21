//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/proctest"
	"go.temporal.io/sdk/client"
)

// TestGracefulStopRedeliversWhatOutlivesTheGrace: a worker stopped by SIGTERM with a 1 s
// grace while its try sleeps for 6 s exits 0; its try is cancelled when the grace runs out,
// recorded as interrupted (the worker's grace, not the liveness timeout) and redelivered to
// the second worker, where it completes, though the step has one try. Then a rolling restart
// of both workers, one at a time, under three runs of quick steps: every run completes with no
// try counted.
func TestGracefulStopRedeliversWhatOutlivesTheGrace(t *testing.T) {
	dir := t.TempDir()
	const queue = "e2e-graceful"
	flow := filepath.Join(dir, "nap.wend.yaml")
	src := fmt.Sprintf("wend: v1\nname: nap\nplugins: {demo: %q}\nsteps:\n  - {id: nap, activity: demo.sleep, with: {ms: 6000}}\n", env.demo)
	if err := os.WriteFile(flow, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startProc(t, "cacheless: ready", env.worker, "--temporal", env.addr, "--task-queue", queue, "--state", filepath.Join(dir, "a"), "--grace", "1s")
	defer a.kill()
	if res := cli(t, time.Minute, env.wendTemporal, "run", flow, "--id", "e2e-graceful", "--detach", "--temporal", env.addr, "--task-queue", queue); res.code != 0 {
		t.Fatalf("wend run --detach exited %d: %s", res.code, res.stderr)
	}
	// The try is running on a once its plugin is.
	for deadline := time.Now().Add(time.Minute); proctest.Running(env.demo, 0) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the try did not start within a minute:\n%s", a.stderr.String())
		}
	}
	b := startWorker(t, queue, filepath.Join(dir, "b"))
	defer b.kill()
	stopped := time.Now()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(time.Minute):
		t.Fatalf("worker a did not stop within a minute of SIGTERM:\n%s", a.stderr.String())
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("worker a exited %d after SIGTERM, want 0:\n%s", code, a.stderr.String())
	}
	t.Logf("worker a stopped %s after SIGTERM", time.Since(stopped).Round(time.Millisecond))

	c, err := client.Dial(client.Options{HostPort: env.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.GetWorkflow(ctx, "e2e-graceful", "").Get(ctx, nil); err != nil {
		t.Fatalf("run did not complete: %v\nworker b:\n%s", err, b.stderr.String())
	}
	d := exportOf(t, env.addr, "e2e-graceful")
	var interrupted []string
	for _, e := range d.HistoryEvents {
		switch e.Type {
		case "ActivityAttemptInterrupted":
			interrupted = append(interrupted, string(e.Data))
		case "ActivityAttemptFailed", "ActivityTimedOut":
			t.Errorf("attempt %d recorded %s: %s", e.Attempt, e.Type, e.Data)
		}
	}
	if len(interrupted) != 1 || !strings.Contains(interrupted[0], "the worker running attempt 1 stopped before it finished (its --grace ran out); redelivered as attempt 2") {
		t.Fatalf("interruptions %q, want one naming the grace", interrupted)
	}

	// A rolling restart under load: stop a worker (SIGTERM), start it again, then the next.
	log := filepath.Join(dir, "invocations.jsonl")
	var ids []string
	for i := range 3 {
		name := fmt.Sprintf("roll%d", i)
		id := "e2e-" + name
		if res := cli(t, time.Minute, env.wendTemporal, "run", crashFlow(t, dir, name, log, 40, 20), "--id", id, "--detach", "--temporal", env.addr, "--task-queue", queue); res.code != 0 {
			t.Fatalf("%s: wend run --detach exited %d: %s", id, res.code, res.stderr)
		}
		ids = append(ids, id)
	}
	workers := []*proc{b, startWorker(t, queue, filepath.Join(dir, "a"))}
	for round := range 4 {
		i := round % 2
		time.Sleep(300 * time.Millisecond)
		workers[i].stop(t)
		if code := workers[i].cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("worker exited %d after SIGTERM:\n%s", code, workers[i].stderr.String())
		}
		workers[i] = startWorker(t, queue, filepath.Join(dir, []string{"b", "a"}[i]))
	}
	defer func() {
		for _, w := range workers {
			w.stop(t)
		}
	}()
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer rcancel()
	for _, id := range ids {
		if err := c.GetWorkflow(rctx, id, "").Get(rctx, nil); err != nil {
			t.Fatalf("%s did not complete: %v", id, err)
		}
	}
	inv := proctest.LoadInvocations(t, log)
	var tally crashTally
	for _, id := range ids {
		checkCrashRun(t, exportOf(t, env.addr, id), inv, 60, 4, &tally)
	}
	t.Logf("rolling restart: %d runs, %d events, %d redeliveries, %d tries counted", len(ids), tally.events, tally.redelivered, tally.counted)
}
