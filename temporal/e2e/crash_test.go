//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/testkit/proctest"
	"go.temporal.io/sdk/client"
)

// crashFlow writes a workflow of n sequential `record` steps and a for_each of m more (5 at
// a time), with the default tries (one) and no timeout: a try whose worker was killed must be
// redelivered, not counted, or the run fails.
func crashFlow(t *testing.T, dir, name, log string, n, m int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "wend: v1\nname: %s\nplugins: {demo: %q}\n", name, env.demo)
	b.WriteString("steps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: s%d, activity: demo.record, with: {path: %q, note: \"%s/s%d\"}}\n", i, log, name, i)
	}
	items := make([]string, m)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	fmt.Fprintf(&b, "  - id: fan\n    for_each: [%s]\n    concurrency: 5\n    steps:\n", strings.Join(items, ", "))
	fmt.Fprintf(&b, "      - activity: demo.record\n        with: {path: %q, note: \"%s/f${{ item }}\"}\n", log, name)
	p := filepath.Join(dir, name+".wend.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCrashWorkerKilled kills the worker while batches of three runs execute (WEND_E2E_KILLS
// times, default 12, over at least WEND_E2E_RUNS runs, default 3), restarting it on the same state folder each time: every
// other kill is a SIGKILL at a random time, the others are the worker's failpoints (a `-tags
// faults` build started with WEND_FAILPOINTS), which exit 137 at a random pass through
// worker-before-call (the activity task started, the plugin not called) or worker-after-call
// (the plugin returned, Temporal not told), in turn. The steps have one try each, so every
// try a kill cut off must come back as a redelivery. Then it checks each run's wend history
// and the plugin's invocation log: every step completed exactly once in history, no try
// counted as failed or timed out, at most 1 + kills attempts per step, sequence numbers
// without gap or repeat, every invocation of a step under the one activity_execution_id the
// history names, and no plugin process left once the last worker stopped.
func TestCrashWorkerKilled(t *testing.T) {
	kills := 12
	if s := os.Getenv("WEND_E2E_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("WEND_E2E_KILLS=%q: want a whole number, at least 1", s)
		}
		kills = n
	}
	minRuns := 3
	if s := os.Getenv("WEND_E2E_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("WEND_E2E_RUNS=%q: want a whole number, at least 1", s)
		}
		minRuns = n
	}
	seed := time.Now().UnixNano() % 100000
	if s := os.Getenv("WEND_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d (WEND_CRASH_SEED=%d to repeat), %d kills, at least %d runs", seed, seed, kills, minRuns)

	dir := t.TempDir()
	log := filepath.Join(dir, "invocations.jsonl")
	const queue = "e2e-crash"
	const seqSteps, fanSteps = 25, 15
	state := filepath.Join(dir, "worker")
	c, err := client.Dial(client.Options{HostPort: env.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Odd kills are a failpoint's: the worker started after an even kill has one armed.
	points := []string{"worker-before-call", "worker-after-call"}
	killed, random, batches, steps := 0, 0, 0, 0
	byPoint := map[string]int{}
	armed, armedIn := "", 0 // the failpoint the running worker dies at ("" for a SIGKILL at random), and the batch it was armed in
	next := func() *proc {
		armed = ""
		if killed < kills && killed%2 == 1 {
			armed, armedIn = points[(killed/2)%len(points)], batches
			return startFaultWorker(t, queue, state, armed, 1+rng.Intn(12))
		}
		return startWorker(t, queue, state)
	}
	w := next()
	// Batches of three runs until the kills are spent; every kill lands while a batch runs.
	var tally crashTally
	for killed < kills || 3*batches < minRuns {
		type run struct {
			id, file string
			done     chan error
		}
		var runs []*run
		for i := range 3 {
			name := fmt.Sprintf("crash%d-%d", batches, i)
			runs = append(runs, &run{id: "e2e-" + name, file: crashFlow(t, dir, name, log, seqSteps, fanSteps), done: make(chan error, 1)})
		}
		batches++
		// Started detached and awaited through the SDK: this test is about the worker, and
		// `wend run`'s following has its own test (TestParityExamples).
		for _, r := range runs {
			if res := cli(t, time.Minute, env.wendTemporal, "run", r.file, "--id", r.id, "--detach", "--temporal", env.addr, "--task-queue", queue); res.code != 0 {
				t.Fatalf("%s: wend run --detach exited %d: %s", r.id, res.code, res.stderr)
			}
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
				defer cancel()
				err := c.GetWorkflow(ctx, r.id, "").Get(ctx, nil)
				r.done <- err
			}()
		}
		for pending := len(runs); pending > 0; {
			var timer <-chan time.Time // a worker with a failpoint armed dies by itself
			if armed == "" {
				timer = time.After(time.Duration(50+rng.Intn(1500)) * time.Millisecond)
			}
			select {
			case <-timer:
				if killed < kills {
					w.kill()
					killed++
					random++
					w = next()
				}
				continue
			case <-w.done:
				code := w.cmd.ProcessState.ExitCode()
				if armed == "" || code != 137 || !strings.Contains(w.stderr.String(), "failpoint "+armed+" hit") {
					t.Fatalf("worker exited %d (armed failpoint %q):\n%s", code, armed, w.stderr.String())
				}
				killed++
				byPoint[armed]++
				w = next()
				continue
			case err := <-runs[len(runs)-pending].done:
				if err != nil {
					t.Errorf("%s did not complete: %v", runs[len(runs)-pending].id, err)
				}
				pending--
			case <-time.After(15 * time.Minute):
				t.Fatalf("batch %d not finished in 15 minutes; worker:\n%s", batches, w.stderr.String())
			}
		}
		t.Logf("batch %d done, %d kills so far", batches, killed)
		if armed != "" && batches > armedIn {
			t.Fatalf("worker armed with failpoint %s in batch %d ran all of batch %d without reaching it: is it built with -tags faults, and does worker.Activities.Call pass it?", armed, armedIn, batches)
		}
		inv := proctest.LoadInvocations(t, log)
		for _, r := range runs {
			steps += seqSteps + fanSteps
			checkCrashRun(t, exportOf(t, env.addr, r.id), inv, seqSteps+fanSteps, killed, &tally)
		}
	}
	// The wend history is a query a worker answers: the checks above ran before this stop.
	w.stop(t)
	inv := proctest.LoadInvocations(t, log)
	orphans := proctest.Running(env.demo, 5*time.Second)
	fmt.Printf("RELIABILITY suite=temporal-crash kills=%d random_sigkill=%d failpoint_before_call=%d failpoint_after_call=%d batches=%d runs=%d steps=%d events=%d events_lost=%d dup_history=%d invocations=%d exec_id_mismatches=%d redeliveries=%d tries_counted=%d max_attempts=%d orphans=%d seed=%d\n",
		killed, random, byPoint[points[0]], byPoint[points[1]], batches, 3*batches, steps, tally.events, tally.lost, tally.dups, proctest.CountInvocations(inv), tally.idMismatch, tally.redelivered, tally.counted, tally.maxAttempt, orphans, seed)
	if (kills >= 2 && byPoint[points[0]] == 0) || (kills >= 4 && byPoint[points[1]] == 0) {
		t.Errorf("failpoint kills %v: every failpoint should have fired", byPoint)
	}
	if orphans > 0 {
		t.Errorf("%d plugin processes outlived the workers", orphans)
	}
	if proctest.CountInvocations(inv) < steps {
		t.Errorf("%d invocations logged for %d steps", proctest.CountInvocations(inv), steps)
	}
}

// crashTally counts what the crash tests report.
type crashTally struct{ events, lost, dups, idMismatch, redelivered, counted, maxAttempt int }

// checkCrashRun checks one crashFlow run's wend history against the plugin's log: every
// step occurrence (want of them) completed exactly once, no try failed or timed out (a killed
// worker's try is interrupted and redelivered), no step with more than 1 + kills attempts,
// sequence numbers without gap or repeat, every invocation under the execution id the
// history names.
func checkCrashRun(t *testing.T, d export.Document, inv map[string][]proctest.Invocation, want, kills int, tally *crashTally) {
	t.Helper()
	id := d.Workflow.WorkflowID
	tally.events += len(d.HistoryEvents)
	attempts := map[string]int{} // execution id -> highest attempt
	for _, e := range d.HistoryEvents {
		switch e.Type {
		case "ActivityAttemptInterrupted":
			tally.redelivered++
		case "ActivityAttemptFailed", "ActivityTimedOut":
			tally.counted++
			t.Errorf("%s: step %s attempt %d recorded %s: a killed worker's try must be redelivered, not counted (%s)", id, e.Step, e.Attempt, e.Type, e.Data)
		}
		if e.ActivityExecutionID != "" && e.Attempt > attempts[e.ActivityExecutionID] {
			attempts[e.ActivityExecutionID] = e.Attempt
		}
	}
	for exec, n := range attempts {
		tally.maxAttempt = max(tally.maxAttempt, n)
		if n > 1+kills {
			t.Errorf("%s: execution %s reached attempt %d with %d kills so far", id, exec, n, kills)
		}
	}
	for i, e := range d.HistoryEvents {
		if e.Seq != uint64(i+1) {
			t.Errorf("%s: event %d has seq %d: the wend history has a gap or a repeat", id, i, e.Seq)
			break
		}
	}
	completed := map[string][]string{} // step -> execution ids of its ActivityCompleted events
	outputs := map[string]string{}     // step -> its ActivityCompleted event's data
	for _, e := range d.HistoryEvents {
		if e.Type == "ActivityCompleted" {
			completed[e.Step] = append(completed[e.Step], e.ActivityExecutionID)
			outputs[e.Step] = string(e.Data)
		}
	}
	// Each step occurrence is one activity in the export; its input names its note in the
	// plugin's log.
	if len(d.Activities) != want {
		tally.lost++
		t.Errorf("%s: %d activities in the export, want %d", id, len(d.Activities), want)
	}
	for _, a := range d.Activities {
		var in struct {
			Note string `json:"note"`
		}
		_ = json.Unmarshal(a.Input, &in)
		ids := completed[a.Step]
		switch {
		case len(ids) == 0:
			tally.lost++
			t.Errorf("%s: step %s (%s) never completed in history (status %s)", id, a.Step, in.Note, a.Status)
			continue
		case len(ids) > 1:
			tally.dups++
			t.Errorf("%s: step %s completed %d times in history", id, a.Step, len(ids))
		}
		if ids[0] != a.ActivityExecutionID {
			tally.idMismatch++
			t.Errorf("%s: step %s completed under %s, scheduled as %s", id, a.Step, ids[0], a.ActivityExecutionID)
		}
		recs := inv[in.Note]
		if len(recs) == 0 {
			// What tells the causes apart: a try under this execution id recorded with
			// another note (the call's input differs from the history's), or none at all.
			var under []proctest.Invocation
			for _, rs := range inv {
				for _, r := range rs {
					if r.ExecID == a.ActivityExecutionID {
						under = append(under, r)
					}
				}
			}
			t.Errorf("%s: step %s completed but the plugin never recorded %q (at least once broken); completed with %s; tries recorded under %s: %+v",
				id, a.Step, in.Note, outputs[a.Step], a.ActivityExecutionID, under)
		}
		for _, rec := range recs {
			if rec.ExecID != a.ActivityExecutionID {
				tally.idMismatch++
				t.Errorf("%s: %s invoked under execution id %s, history names %s", id, in.Note, rec.ExecID, a.ActivityExecutionID)
			}
		}
	}
}

// exportOf is the run's export as `wend-temporal history` gives it.
func exportOf(t *testing.T, addr, id string) export.Document {
	t.Helper()
	out := filepath.Join(t.TempDir(), id+".json")
	h := cli(t, time.Minute, env.wendTemporal, "history", id, "--output", out, "--temporal", addr)
	if h.code != 0 {
		t.Fatalf("wend history %s exited %d: %s", id, h.code, h.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d export.Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}
