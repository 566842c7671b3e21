//go:build unix

package crashtest

import (
	"context"
	"encoding/json"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/testkit/needs"
)

// TestScheduleFiresAcrossKills is docs/reliability.md S1: a schedule firing every second
// (allow_all, so every fire must start a run) is served by a real `wend serve` that is
// killed 24 times (9 in the default loop) around its fires: with SIGKILL at a random moment, or at the failpoints
// between recording a fire and starting its run and between starting the run and clearing
// the intent. After a clean last serve, every second from the first fire to the last fire
// handled has exactly one run, and no workflow id has two.
func TestScheduleFiresAcrossKills(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	dir := t.TempDir()
	db, wfDir := filepath.Join(dir, "wend.db"), filepath.Join(dir, "wf")
	must(t, os.MkdirAll(wfDir, 0o755))
	must(t, os.WriteFile(filepath.Join(wfDir, "tick.wend.yaml"), []byte(
		"wend: v1\nname: tick\nschedules:\n  - {id: tick, every: 1s, overlap: allow_all}\nsteps:\n  - {id: s, steps: []}\n"), 0o644))
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	kills := needs.Size("", 9, 24)
	fired := 0
	for i := range kills {
		failpoints := ""
		switch i % 3 {
		case 1:
			failpoints = "schedule-recorded=" + string(rune('1'+rng.Intn(3)))
		case 2:
			failpoints = "schedule-started=" + string(rune('1'+rng.Intn(3)))
		}
		srv := startScheduleServe(t, wend, db, wfDir, failpoints)
		// Progress, not latency: wait (generously) for at least one new fire's run, or for
		// the failpoint to end the process, then kill at a random point of the next second.
		exited := make(chan struct{})
		go func() { _ = srv.Wait(); close(exited) }()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if n := scheduleRuns(t, db); n > fired {
				fired = n
				break
			}
			select {
			case <-exited:
			default:
				if time.Now().After(deadline) {
					_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
					t.Fatalf("kill %d: no new fire's run in 60s", i)
				}
				continue
			}
			break
		}
		time.Sleep(time.Duration(rng.Intn(1200)) * time.Millisecond)
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	// A clean serve works off what the kills left, then stops on SIGTERM.
	srv := startScheduleServe(t, wend, db, wfDir, "")
	for deadline := time.Now().Add(60 * time.Second); scheduleRuns(t, db) <= fired; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			t.Fatal("the last serve started no run in 60s")
		}
	}
	_ = syscall.Kill(srv.Process.Pid, syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("the last serve did not stop cleanly: %v", err)
	}

	st, err := boltstore.Open(db, boltstore.Options{})
	must(t, err)
	defer st.Close()
	recs, err := st.ScheduleStates()
	must(t, err)
	var rec runner.Record
	must(t, json.Unmarshal(recs["tick"], &rec))
	if len(rec.State.Starting) != 0 {
		t.Fatalf("a clean stop left %d fires to start", len(rec.State.Starting))
	}
	runs, err := st.Runs(history.RunFilter{})
	must(t, err)
	byID := map[string]int{}
	var nominal []time.Time
	for _, r := range runs {
		byID[r.WorkflowID]++
		at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(r.WorkflowID, "tick-"))
		if err != nil {
			t.Fatalf("run %s: workflow id %q names no fire", r.RunID, r.WorkflowID)
		}
		if r.Status != history.StatusCompleted {
			t.Errorf("run of %s is %s, want completed", r.WorkflowID, r.Status)
		}
		nominal = append(nominal, at)
	}
	for id, n := range byID {
		if n != 1 {
			t.Errorf("duplicate fire: %d runs of %s", n, id)
		}
	}
	sort.Slice(nominal, func(i, j int) bool { return nominal[i].Before(nominal[j]) })
	first, last := nominal[0], rec.State.Last
	lost := 0
	for at := first; !at.After(last); at = at.Add(time.Second) {
		if byID[schedule.WorkflowID("tick", at)] != 1 {
			lost++
			t.Errorf("lost fire %s", at.Format(time.RFC3339))
		}
	}
	if lost == 0 && len(byID) != int(last.Sub(first)/time.Second)+1 {
		t.Errorf("%d runs for the %d fires from %s to %s", len(byID), int(last.Sub(first)/time.Second)+1, first, last)
	}
	if rec.State.Counts.Missed != 0 {
		t.Errorf("%d fires counted missed inside a 365d catch-up window", rec.State.Counts.Missed)
	}
	t.Logf("%d kills, %d runs for the fires from %s to %s, %d lost", kills, len(byID), first.Format(time.TimeOnly), last.Format(time.TimeOnly), lost)
}

func startScheduleServe(t *testing.T, wend, db, wfDir, failpoints string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(wend, "serve", "--db", db, "--listen", "off", "--workflows", wfDir)
	cmd.Env = append(os.Environ(), "WEND_FAILPOINTS="+failpoints)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	must(t, cmd.Start())
	return cmd
}

// scheduleRuns asks the serving process (over its control socket) how many runs the schedule
// has started; 0 while none answers.
func scheduleRuns(t *testing.T, db string) int {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", db+".sock")
		}}}
	resp, err := hc.Get("http://wend/v1/schedules/tick")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var out struct{ Schedule runner.View }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return 0
	}
	return int(out.Schedule.State.Counts.Started)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
