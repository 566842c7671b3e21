//go:build unix

package crashtest

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/needs"
)

// TestSignalsAcrossKills is docs/reliability.md E1 on real processes: a client sends 30 signals
// (15 in the default loop),
// each with its own id, resending any it did not see acknowledged, while the `wend serve` that
// holds the database is killed with SIGKILL at random and restarted. Every acknowledged signal
// must be in the history exactly once, in the order sent, and consumed in that order.
func TestSignalsAcrossKills(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wend.db")
	n := needs.Size("", 15, 30)
	wf := filepath.Join(dir, "sig.wend.yaml")
	src := "wend: v1\nname: sig\nsteps:\n  - id: each\n    for_each: \"${{ input.items }}\"\n    steps: [{wait_for_signal: s}]\noutput: \"${{ steps.each.output }}\"\n"
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	items := make([]int, n)
	in, _ := json.Marshal(map[string]any{"items": items})
	if out, err := exec.Command(wend, "run", "--detach", "--id", "sig", "--db", db, "--input", string(in), wf).CombinedOutput(); err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	seed := time.Now().UnixNano() % 100000
	rng := rand.New(rand.NewSource(seed))

	serve := func() *served { return startServe(t, wend, db, "") }
	srv := serve()
	defer func() { _ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); _ = srv.Wait() }()
	kills, resends := 0, 0
	for i := 1; i <= n; i++ {
		for try := 0; ; try++ {
			if try > 200 {
				t.Fatalf("signal %d never acknowledged", i)
			}
			if try == 0 && i%3 == 0 {
				// Kill the holder before every third signal, after a random head start, so the
				// kills land at varied points of the run's progress.
				time.Sleep(time.Duration(rng.Intn(80)) * time.Millisecond)
				_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
				_ = srv.Wait()
				kills++
				srv = serve()
			}
			cmd := exec.Command(wend, "signal", "sig", "s", "--data", fmt.Sprint(i), "--id", fmt.Sprintf("sig-%d", i), "--db", db)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if rng.Intn(3) == 0 {
				// The client dies at a random moment: it cannot know whether its signal was
				// recorded, so it sends again with the same id.
				time.AfterFunc(time.Duration(5+rng.Intn(60))*time.Millisecond, func() { _ = cmd.Process.Kill() })
			}
			if cmd.Wait() == nil {
				break // acknowledged: durable from here on
			}
			resends++
			time.Sleep(20 * time.Millisecond)
		}
	}
	_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
	_ = srv.Wait()
	// Let a last process finish the run from the history.
	if out, err := exec.Command(wend, "resume", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(history.RunFilter{WorkflowID: "sig"})
	evs, err := st.Events(runs[0].RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Type == history.SignalReceived {
			s, _ := history.DataOf[history.Signal](e)
			got = append(got, string(s.Data))
		}
	}
	c, _ := history.DataOf[history.Closed](evs[len(evs)-1])
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprint(i + 1)
	}
	dups := len(got) - len(uniq(got))
	fmt.Printf("RELIABILITY suite=signals signals_sent=%d acked=%d in_history=%d duplicates=%d resends=%d kills=%d seed=%d\n",
		n, n, len(got), dups, resends, kills, seed)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("signals in history %v, want %v", got, want)
	}
	if runs[0].Status != history.StatusCompleted || string(c.Output) != "["+strings.Join(want, ",")+"]" {
		t.Fatalf("run %s output %s", runs[0].Status, c.Output)
	}
	if kills != n/3 {
		t.Fatalf("%d kills, want %d", kills, n/3)
	}
}

func uniq(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}
