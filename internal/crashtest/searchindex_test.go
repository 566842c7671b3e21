//go:build unix

package crashtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/needs"
)

// TestIndexesAcrossKills: runs of a workflow with search fields (customer from its input, stage
// from each signal it takes) queue behind their customer's concurrency key, take signals that
// change their stage, complete and are purged, while the serve driving them is killed with
// SIGKILL at random moments and at the engine's commit failpoints, and started again. After
// a last kill, `wend list --where` (read through the search index) on every customer and
// stage gives exactly the runs a scan of every run record gives, and `wend check` is clean.
// By default 9 runs and 5 kills; WEND_TEST_ALL=1 runs 30 runs through 21 kills.
func TestIndexesAcrossKills(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	perKey, kills, perRound := 3, 4, 2
	if needs.All() {
		perKey, kills, perRound = 10, 20, 1
	}
	wend, _ := bins(t)
	dir := t.TempDir()
	db, sock := filepath.Join(dir, "wend.db"), filepath.Join(dir, "wend.db.sock")
	wf := filepath.Join(dir, "order.wend.yaml")
	must(t, os.WriteFile(wf, []byte(`wend: v1
name: order
concurrency: {key: "${{ input.c }}", limit: 1}
search:
  customer: {type: string, value: "${{ input.c }}"}
  stage: {type: string, value: "${{ state.stage }}"}
steps:
  - wait_for_signal: one
    set: {stage: "${{ signal }}"}
  - wait_for_signal: two
    set: {stage: "${{ signal }}"}
`), 0o644))
	seed := time.Now().UnixNano() % 100000
	rng := rand.New(rand.NewSource(seed))
	customers := []string{"ann", "bob", "cyd"}
	stages := []string{"packed", "sent", "paid"}

	srv := startServe(t, wend, db, "")
	defer func() { _ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); _ = srv.Wait() }()
	waitSocket(t, srv, sock)
	var ids []string
	sent := map[string]int{} // signals acknowledged (or found delivered) per run
	for i := range perKey {
		for _, c := range customers {
			id := fmt.Sprintf("%s-%d", c, i)
			if out, err := exec.Command(wend, "run", "--detach", "--db", db, "--id", id, "--input", fmt.Sprintf(`{"c": %q}`, c), wf).CombinedOutput(); err != nil {
				t.Fatalf("start %s: %v\n%s", id, err, out)
			}
			ids = append(ids, id)
			sent[id] = 0
		}
	}
	randomKills, faults := 0, 0
	// restart kills the serve, at a random moment or by a failpoint at one of the next commits
	// it makes (a signal's, a queued run's start), and starts it again.
	restart := func() {
		if rng.Intn(2) == 0 {
			time.Sleep(time.Duration(rng.Intn(60)) * time.Millisecond)
			randomKills++
		} else {
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			_ = srv.Wait()
			point := []string{"before-commit", "after-commit"}[rng.Intn(2)]
			srv = startServe(t, wend, db, fmt.Sprintf("%s=%d", point, 1+rng.Intn(2)))
			waitSocket(t, srv, sock)
			// The serve dies at its failpoint while signals commit; a signal cut off by it is
			// acknowledged or not, as at any crash.
			for i := 0; i < 3; i++ {
				signalSome(wend, db, rng, sent, stages, 1)
				select {
				case <-srv.exited:
					i = 3
				case <-time.After(100 * time.Millisecond):
				}
			}
			faults++
		}
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
		srv = startServe(t, wend, db, "")
		waitSocket(t, srv, sock)
	}
	// Each round signals runs, queued or running, with a stage at random (each run takes "one",
	// then "two", and completes), purges the completed runs every second round, and kills the
	// serve.
	for round := 0; randomKills+faults < kills; round++ {
		if !signalSome(wend, db, rng, sent, stages, perRound) {
			break // every run is done
		}
		if round%2 == 1 {
			_ = exec.Command(wend, "purge", "--all", "--db", db).Run()
		}
		restart()
	}
	// Signals, and a last crash: the checks below open the database themselves and replay the
	// log the killed serve left.
	signalSome(wend, db, rng, sent, stages, 2)
	time.Sleep(time.Duration(rng.Intn(60)) * time.Millisecond)
	_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
	_ = srv.Wait()
	randomKills++

	list := func(where string) []string {
		t.Helper()
		out, err := exec.Command(wend, "list", "--db", db, "--json", "--where", where).Output()
		if err != nil {
			t.Fatalf("list --where %s: %v", where, err)
		}
		var runs []struct {
			RunID string `json:"run_id"`
		}
		must(t, json.Unmarshal(out, &runs))
		var got []string
		for _, r := range runs {
			got = append(got, r.RunID)
		}
		slices.Sort(got)
		return got
	}
	// Run ids of a scan of every run record, by search field and value.
	scanned := func() map[string][]string {
		st, err := boltstore.Open(db, boltstore.Options{ReadOnly: true})
		must(t, err)
		defer st.Close()
		runs, err := st.Runs(history.RunFilter{})
		must(t, err)
		out := map[string][]string{}
		for _, r := range runs {
			for f, v := range r.Search {
				k := fmt.Sprintf("%s = %q", f, v)
				out[k] = append(out[k], r.RunID)
			}
		}
		for _, v := range out {
			slices.Sort(v)
		}
		return out
	}
	checked, listed := 0, 0
	for _, v := range append(slices.Clone(customers), stages...) {
		field := "customer"
		if !slices.Contains(customers, v) {
			field = "stage"
		}
		where := fmt.Sprintf("%s = %q", field, v)
		got := list(where)
		want := scanned()[where]
		if !slices.Equal(got, want) {
			t.Errorf("list --where '%s' lists %v; a scan of the run records finds %v", where, got, want)
		}
		checked++
		listed += len(got)
	}
	out, err := exec.Command(wend, "check", "--db", db).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok: ") {
		t.Errorf("check after the last kill: %v\n%s", err, out)
	}
	if randomKills+faults < kills+1 {
		t.Errorf("%d kills, want %d: every run was done before", randomKills+faults, kills+1)
	}
	if listed == 0 {
		t.Errorf("no filter listed a run: the scan holds none to compare")
	}
	t.Logf("%d runs, %d kills at random, %d at failpoints, %d filters listing %d runs, seed %d", len(ids), randomKills, faults, checked, listed, seed)
}

// signalSome signals up to n runs not yet done (taken from sent) the next of "one" and "two"
// each waits for, with a stage at random; it returns false when every run is done. A run found
// finished or gone took its last signal after all (a crash cut off its acknowledgement), and is
// done.
func signalSome(wend, db string, rng *rand.Rand, sent map[string]int, stages []string, n int) bool {
	var open []string
	for id, k := range sent {
		if k < 2 {
			open = append(open, id)
		}
	}
	if len(open) == 0 {
		return false
	}
	slices.Sort(open)
	rng.Shuffle(len(open), func(i, j int) { open[i], open[j] = open[j], open[i] })
	for _, id := range open[:min(n, len(open))] {
		name := []string{"one", "two"}[sent[id]]
		stage := stages[rng.Intn(len(stages))]
		out, err := exec.Command(wend, "signal", "--db", db, id, name, "--data", fmt.Sprintf("%q", stage)).CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			sent[id]++
		case errors.As(err, &ee) && ee.ExitCode() == 1 && (strings.Contains(string(out), "finished") || strings.Contains(string(out), "no such")):
			sent[id] = 2
		}
	}
	return true
}
