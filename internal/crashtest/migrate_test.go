//go:build unix

package crashtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
)

// TestMigrateAcrossKills: `wend migrate --where` moves open runs as a batch of wend serve, and
// serve is killed (at a failpoint) at the third run's move, before or after its commit. Each
// run is then moved once or not at all: on its old text with no WorkflowMigrated, or on the
// new one with exactly one, its history checking clean. The restarted serve resumes the batch
// and completes it with every run moved exactly once (the run in doubt answers "already");
// the same command sent again moves none twice, and the moved runs complete under the new file.
func TestMigrateAcrossKills(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	const n = 5
	base := "wend: v1\nname: wait\nsteps: [{id: w, wait_for_signal: go}]\n"
	next := "wend: v1\nname: wait\nsteps: [{id: w, wait_for_signal: go}, {id: after, wait_for_signal: again}]\noutput: moved\n"
	for _, point := range []string{"migrate-before-commit", "migrate-after-commit"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "wend.db")
			v1, v2 := filepath.Join(dir, "wait.wend.yaml"), filepath.Join(dir, "wait.v2.wend.yaml")
			must(t, os.WriteFile(v1, []byte(base), 0o644))
			must(t, os.WriteFile(v2, []byte(next), 0o644))
			for i := range n {
				if out, err := exec.Command(wend, "run", "--detach", "--id", fmt.Sprintf("m-%d", i), "--db", db, v1).CombinedOutput(); err != nil {
					t.Fatalf("start m-%d: %v\n%s", i, err, out)
				}
			}
			srv := startServe(t, wend, db, point+"=3")
			defer func() { _ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); _ = srv.Wait() }()
			waitSocket(t, srv, db+".sock")
			out, err := exec.Command(wend, "migrate", "--where", "name = wait", "--to", v2, "--yes", "--db", db).CombinedOutput()
			if err == nil {
				t.Fatalf("the migration went through a serve killed at its third move:\n%s", out)
			}
			_ = srv.Wait()
			if !strings.Contains(srv.Stderr(), "failpoint "+point+" hit") {
				t.Fatalf("serve did not die at %s:\n%s", point, srv.Stderr())
			}
			wantMoved := 2
			if point == "migrate-after-commit" {
				wantMoved = 3
			}
			if moved := migrations(t, db, n, hashOf(base), hashOf(next)); moved != wantMoved {
				t.Fatalf("%d runs moved after the kill at %s, want %d\n%s", moved, point, wantMoved, out)
			}

			srv = startServe(t, wend, db, "")
			waitSocket(t, srv, db+".sock")
			deadline := time.Now().Add(60 * time.Second)
			for {
				o, err := exec.Command(wend, "batch", "list", "--json", "--db", db).Output()
				var bs []struct {
					Status             string
					Done, Failed, Next int
				}
				if err == nil && json.Unmarshal(o, &bs) == nil && len(bs) == 1 && bs[0].Status != "running" {
					if bs[0].Status != "completed" || bs[0].Done != n || bs[0].Failed != 0 {
						t.Fatalf("the resumed batch closed as %+v, want completed with %d done", bs[0], n)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the batch did not complete after the restart: %s %v", o, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			out, err = exec.Command(wend, "migrate", "--where", "name = wait", "--to", v2, "--yes", "--db", db).CombinedOutput()
			if err != nil || !strings.Contains(string(out), fmt.Sprintf("%d of %d run(s) done, 0 failed", n, n)) {
				t.Fatalf("the migration sent again: %v\n%s", err, out)
			}
			for i := range n {
				id := fmt.Sprintf("m-%d", i)
				for _, sig := range []string{"go", "again"} {
					if o, err := exec.Command(wend, "signal", id, sig, "--db", db).CombinedOutput(); err != nil {
						t.Fatalf("signal %s %s: %v\n%s", id, sig, err, o)
					}
				}
				if o, err := exec.Command(wend, "wait", id, "--db", db).CombinedOutput(); err != nil || !strings.Contains(string(o), "moved") {
					t.Fatalf("wend wait %s: %v\n%s", id, err, o)
				}
			}
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			_ = srv.Wait()
			if moved := migrations(t, db, n, hashOf(base), hashOf(next)); moved != n {
				t.Fatalf("%d runs moved in the end, want all %d", moved, n)
			}
		})
	}
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// migrations reads the database no process holds and returns how many of the n runs moved
// from one text to the other, failing on a run moved twice, a record that names a text its
// history does not, or a history that does not check.
func migrations(t *testing.T, db string, n int, from, to string) int {
	t.Helper()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	moved := 0
	for i := range n {
		id := fmt.Sprintf("m-%d", i)
		runs, err := st.Runs(history.RunFilter{WorkflowID: id})
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs of %s: %v %v", id, runs, err)
		}
		evs, err := st.Events(runs[0].RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ps := append(history.Check(runs[0], evs), history.CheckRecord(runs[0], evs)...); len(ps) > 0 {
			t.Fatalf("%s: %v", id, ps)
		}
		switch c := count(evs, history.WorkflowMigrated); {
		case c == 0 && runs[0].SpecSHA256 == from:
		case c == 1 && runs[0].SpecSHA256 == to:
			moved++
		default:
			t.Fatalf("%s: %d WorkflowMigrated events, record on %s", id, c, runs[0].SpecSHA256)
		}
	}
	return moved
}
