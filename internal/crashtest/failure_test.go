//go:build unix

package crashtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
)

// TestFailurePathsAcrossKills kills wend during a backoff wait, during a try bounded by a
// heartbeat timeout, and across a workflow deadline, and resumes each run: the history must
// stay well-formed with no duplicated event, every retry must run no earlier than its
// available_at (at once if that passed while wend was down), and each run must end as its
// failure path says.
func TestFailurePathsAcrossKills(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, plugin := bins(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wend.db")
	write := func(name, body string) string {
		p := filepath.Join(dir, name+".wend.yaml")
		src := fmt.Sprintf("wend: v1\nname: %s\nplugins: {demo: %q}\n%s", name, plugin, body)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		id, body string
		kills    []time.Duration // SIGKILL after each delay, then a last run to the end
		status   string
	}{
		{"backoff", "steps: [{activity: demo.fail, with: {message: busy}, retry: {tries: 4, backoff: [700ms]}}]\n",
			[]time.Duration{300 * time.Millisecond, 900 * time.Millisecond}, history.StatusFailed},
		// The plugin heartbeats every 100ms; each kill lands while the try's heartbeat timer is
		// armed, the try is redelivered after the restart, and the run completes. The sleep is
		// twice the heartbeat timeout, so the try completes only if heartbeats keep re-arming it.
		// The timeout is 15 heartbeats: on a loaded machine (ten CPU burners on the test's core)
		// a heartbeat took over 400 ms from the plugin to the engine's timer, so a 400 ms timeout
		// timed out every healthy try and the run failed once its three tries were spent.
		{"heartbeat", "steps: [{activity: demo.sleep, with: {ms: 3000}, heartbeat_timeout: 1500ms, retry: {tries: 3}}]\n",
			[]time.Duration{700 * time.Millisecond, 900 * time.Millisecond}, history.StatusCompleted},
		{"deadline", "timeouts: {run: 1s}\nsteps: [{wait_for_signal: never}]\n",
			[]time.Duration{300 * time.Millisecond}, history.StatusFailed},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			wf := write(tc.id, tc.body)
			for _, d := range tc.kills {
				if a := runOnceID(t, wend, db, wf, tc.id, d); !a.killed {
					t.Fatalf("run ended (exit %d) before the planned kill; stderr:\n%s", a.exit, a.stderr)
				}
				if tc.id == "deadline" {
					time.Sleep(1500 * time.Millisecond) // down while the deadline passes
				}
			}
			last := runOnceID(t, wend, db, wf, tc.id, 0)
			st, err := boltstore.Open(db, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			runs, _ := st.Runs(history.RunFilter{WorkflowID: tc.id})
			evs, err := st.Events(runs[0].RunID, 0)
			if err != nil {
				t.Fatal(err)
			}
			if last.killed || (last.exit == 0) != (tc.status == history.StatusCompleted) {
				t.Fatalf("last run exit %d; stderr:\n%s\nhistory:\n%s", last.exit, last.stderr, eventLines(evs))
			}
			early, dups := 0, 0
			var due time.Time
			seen := map[string]bool{}
			for _, e := range evs {
				key := fmt.Sprintf("%s|%s|%d|%s", e.Type, e.ActivityExecutionID, e.Attempt, e.Data)
				// A redelivered try heartbeats the same progress again: not a duplicate fact.
				if e.Type != history.TimerCancelled && e.Type != history.ActivityHeartbeatRecorded && seen[key] {
					dups++
				}
				seen[key] = true
				switch e.Type {
				case history.ActivityRetryScheduled:
					rs, _ := history.DataOf[history.RetrySchedule](e)
					due = rs.AvailableAt
				case history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityCompleted:
					if !due.IsZero() && e.Time.Before(due) {
						early++
					}
				}
			}
			fmt.Printf("RELIABILITY suite=failure-paths case=%s kills=%d events=%d dup_events=%d early_retries=%d status=%s closed_reason=%s\n",
				tc.id, len(tc.kills), len(evs), dups, early, runs[0].Status, runs[0].ClosedReason)
			if ps := history.Check(runs[0], evs); len(ps) > 0 {
				t.Fatal(ps)
			}
			if dups > 0 || early > 0 || runs[0].Status != tc.status {
				t.Fatalf("dups %d, early %d, status %s", dups, early, runs[0].Status)
			}
			if tc.id == "deadline" && runs[0].ClosedReason != history.ClosedTimedOut {
				t.Fatalf("closed reason %s", runs[0].ClosedReason)
			}
		})
	}
}

// eventLines renders a history one event a line, for a failure's message.
func eventLines(evs []history.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%3d %s %s %s attempt %d %s\n", e.Seq, e.Time.Format("15:04:05.000"), e.Type, e.Step, e.Attempt, e.Data)
	}
	return b.String()
}
