//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/schedule"
)

const tickFlow = `wend: v1
name: tick
schedules:
  - id: tick-hourly
    every: 1h
    overlap: allow_all
    input: {n: 1}
steps:
  - id: count
    delay: 10ms
    set: {n: "${{ input.n }}"}
output: "${{ state.n }}"
`

// TestSchedulesOnTemporal: wend schedule sync makes a file's schedules Temporal Schedules
// (created, then unchanged, then updated when the file changes); list, show, pause, resume,
// trigger, backfill and delete act on them; a backfilled fire's run has the workflow id the
// local runner gives the same time.
func TestSchedulesOnTemporal(t *testing.T) {
	const queue = "schedules-e2e"
	w := startWorker(t, queue, filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	flows := t.TempDir()
	file := filepath.Join(flows, "tick.wend.yaml")
	if err := os.WriteFile(file, []byte(tickFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	tc := func(want int, args ...string) string {
		t.Helper()
		r := cli(t, time.Minute, env.wendTemporal, append(args, "--temporal", env.addr, "--task-queue", queue)...)
		if r.code != want {
			t.Fatalf("%v: exit %d; want %d\nstdout:\n%s\nstderr:\n%s", args, r.code, want, r.stdout, r.stderr)
		}
		return r.stdout + r.stderr
	}
	expect := func(out, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Fatalf("want %q in:\n%s", want, out)
		}
	}
	expect(tc(0, "schedule", "sync", flows), "schedule tick-hourly created")
	expect(tc(0, "schedule", "sync", flows), "schedule tick-hourly unchanged")
	out := tc(0, "schedule", "list")
	expect(out, "tick-hourly")
	expect(out, "every 1h0m0s")
	expect(out, "allow_all")

	// Three fires in [00:00, 03:00): the runs Temporal starts have the local runner's ids.
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	expect(tc(0, "schedule", "backfill", "tick-hourly", from.Format(time.RFC3339), from.Add(3*time.Hour).Format(time.RFC3339)),
		"3 fire(s) recorded")
	for i := range 3 {
		id := schedule.WorkflowID("tick-hourly", from.Add(time.Duration(i)*time.Hour))
		deadline := time.Now().Add(time.Minute)
		for {
			r := cli(t, time.Minute, env.wendTemporal, "show", id, "--temporal", env.addr)
			if r.code == 0 && strings.Contains(r.stdout, "completed") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s of the backfill did not complete within a minute: %d\n%s%s", id, r.code, r.stdout, r.stderr)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if r := cli(t, time.Minute, env.wendTemporal, "show", schedule.WorkflowID("tick-hourly", from.Add(3*time.Hour)), "--temporal", env.addr); r.code == 0 {
		t.Fatalf("the backfill fired at its end time too:\n%s", r.stdout)
	}
	// A range the local runner refuses is refused the same way, before the cluster sees it.
	expect(tc(1, "schedule", "backfill", "tick-hourly", from.Format(time.RFC3339), from.Format(time.RFC3339)), "FROM must be before TO")

	expect(tc(0, "schedule", "pause", "tick-hourly", "--note", "maintenance"), "schedule tick-hourly paused")
	out = tc(0, "schedule", "show", "tick-hourly")
	expect(out, "paused")
	expect(out, "maintenance")
	expect(tc(0, "schedule", "resume", "tick-hourly"), "schedule tick-hourly resumed")
	expect(tc(0, "schedule", "trigger", "tick-hourly"), "schedule tick-hourly fired: tick-hourly-")
	expect(tc(1, "schedule", "show", "nope"), `schedule "nope"`)

	// An edited file updates the schedule; one no file declares is pruned.
	if err := os.WriteFile(file, []byte(strings.Replace(tickFlow, "every: 1h", "every: 2h", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(tc(0, "schedule", "sync", flows), "schedule tick-hourly updated")
	expect(tc(0, "schedule", "list"), "every 2h0m0s")
	empty := t.TempDir()
	expect(tc(0, "schedule", "sync", empty), "schedule tick-hourly not declared by these files")
	expect(tc(0, "schedule", "sync", empty, "--prune"), "schedule tick-hourly deleted")
	expect(tc(0, "schedule", "list"), "no schedules")
}
