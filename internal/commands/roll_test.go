package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/testkit/proctest"
)

// buildTestPlugin builds the plugins' test plugin reporting version v.
func buildTestPlugin(t *testing.T, v string) string {
	t.Helper()
	return buildOnce(t, "testplugin-"+v, "./plugins/internal/testplugin", "-ldflags=-X main.version="+v)
}

// deploy installs the binary at src as dst the way a deploy should (beside it, then renamed
// over it) and returns its sha256.
func deploy(t *testing.T, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".new", dst); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

const rollSpec = `wend: v1
name: roll
plugins: {p: ./plug}
steps:
  - id: work
    activity: p.fail_unless
    with: {version: v2}
    retry: {tries: %d, backoff: [1h]}
output: "${{ steps.work.output }}"
`

// The recovery procedure of a failure caused by a plugin's bug: deploy the fix, then the
// waiting retries and `wend retry` run on it. A run in a backoff after a try failed on the old
// build completes on the new one, in a new process, once the executable is replaced; the old
// process stops (no orphan); the export names the build of each try. A run that failed on the
// old build, retried in the same process, completes on the new one too.
func TestRollDuringBackoffThenRetry(t *testing.T) {
	oldBin, newBin := buildTestPlugin(t, "v1"), buildTestPlugin(t, "v2")
	dir := t.TempDir()
	plug := filepath.Join(dir, "plug")
	oldSum := deploy(t, oldBin, plug)

	clock := engine.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := apptest.Open(t, apptest.Options{Dir: dir, Clock: clock})
	st, router, eng := a.Store, a.Plugins, a.Engine
	srv := server.New(eng, st)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := func(id string, tries int) {
		t.Helper()
		src := fmt.Sprintf(rollSpec, tries)
		file := filepath.Join(dir, id+".wend.yaml")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := eng.Start(ctx, engine.StartRequest{WorkflowID: id, SpecFile: file, Source: src}); err != nil {
			t.Fatal(err)
		}
	}

	// "failed" has one try: it fails on the old build. "waiting" has four: its first fails
	// on the old build and its retry waits an hour of the engine's clock.
	start("failed", 1)
	if r, err := eng.WaitClosed(ctx, "failed"); err != nil || r.Status != history.StatusFailed {
		t.Fatalf("failed: %+v, %v; want it failed on the old build", r, err)
	}
	start("waiting", 4)
	waitFor(t, ctx, st, "waiting", history.ActivityRetryScheduled)
	oldPID := oldBuildPID(t, srv, "waiting")
	if len(proctest.Group(oldPID)) == 0 {
		t.Fatalf("the old build's process %d is not running", oldPID)
	}

	newSum := deploy(t, newBin, plug)
	clock.Advance(time.Hour)
	r, err := eng.WaitClosed(ctx, "waiting")
	if err != nil || r.Status != history.StatusCompleted {
		t.Fatalf("waiting: %+v, %v; want it completed on the new build", r, err)
	}
	doc, err := srv.Export("waiting")
	if err != nil {
		t.Fatal(err)
	}
	atts := doc.Activities[0].Attempts
	if len(atts) != 2 || atts[0].Outcome != runview.AttemptFailed || atts[0].PluginSHA256 != oldSum ||
		atts[1].Outcome != runview.AttemptCompleted || atts[1].PluginSHA256 != newSum {
		t.Fatalf("attempts %s\nwant try 1 failed on build %s, try 2 completed on build %s", jsonOf(atts), oldSum, newSum)
	}
	var out struct {
		Version string `json:"version"`
		PID     int    `json:"pid"`
	}
	if err := json.Unmarshal(doc.Workflow.Output, &out); err != nil || out.Version != "v2" || out.PID == oldPID {
		t.Fatalf("output %s, want version v2 from a process other than %d", doc.Workflow.Output, oldPID)
	}
	waitGone(t, oldPID) // the old build's process stopped once idle

	rt, err := srv.Retry(ctx, "failed")
	if err != nil {
		t.Fatal(err)
	}
	r, err = eng.WaitClosed(ctx, "failed")
	if err != nil || r.Status != history.StatusCompleted || r.RunID != rt.Run.RunID {
		t.Fatalf("retry of failed: %+v, %v; want run %s completed on the new build", r, err, rt.Run.RunID)
	}
	doc, err = srv.Export("failed")
	if err != nil {
		t.Fatal(err)
	}
	last := doc.Activities[0].Attempts[len(doc.Activities[0].Attempts)-1]
	if last.Outcome != runview.AttemptCompleted || last.PluginSHA256 != newSum {
		t.Fatalf("retried run's attempts %s, want the last completed on build %s", jsonOf(doc.Activities[0].Attempts), newSum)
	}
	// The old process is gone from /proc; the host's reaper notices it in its own time.
	deadline := time.Now().Add(time.Minute)
	for router.Stats().Processes != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := router.Stats(); st.Processes != 1 || st.Rolls != 1 {
		t.Fatalf("plugin stats %+v, want 1 process after 1 roll", st)
	}
}

// waitFor polls workflow id's history until it holds an event of type typ.
func waitFor(t *testing.T, ctx context.Context, st history.Store, id string, typ history.EventType) {
	t.Helper()
	for {
		runs, err := st.Runs(history.RunFilter{WorkflowID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 {
			evs, err := st.Events(runs[0].RunID, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Type == typ {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never recorded %s", id, typ)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

var oldBuildMsg = regexp.MustCompile(`build v1 \(pid (\d+)\) is not v2`)

// oldBuildPID reads the pid of the process that failed the run's first try from its error.
func oldBuildPID(t *testing.T, srv *server.Server, id string) int {
	t.Helper()
	doc, err := srv.Export(id)
	if err != nil {
		t.Fatal(err)
	}
	e := doc.Activities[0].Attempts[0].Error
	if e == nil {
		t.Fatalf("%s: the first try has no error", id)
	}
	m := oldBuildMsg.FindStringSubmatch(e.Message)
	if m == nil {
		t.Fatalf("%s: first try failed with %q, want the old build's error", id, e.Message)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// waitGone fails the test unless process group pgid empties within a minute: a bound on a
// hang, not a measure of speed.
func waitGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(proctest.Group(pgid)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still runs: %v", pgid, proctest.Group(pgid))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func jsonOf(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
