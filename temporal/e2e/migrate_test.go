//go:build unix

package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMigrateOnTemporal: wend migrate --temporal sends each run the move as a signal; the
// workflow moves a run only when its history replays on the new text (a dry run checks it
// without sending), and a run it would break stays on its own text. The worker replays the
// whole execution at every workflow task (its sticky cache is off), so a moved run that goes
// on to its end under the new text shows the move replays deterministically.
func TestMigrateOnTemporal(t *testing.T) {
	w := startWorker(t, "wend", filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	dir := t.TempDir()
	write := func(name, text string) string { return writeIn(t, dir, name, text) }
	file := write("redeploy.wend.yaml", twoWaits)
	added := write("added.wend.yaml", twoWaits+"  - id: third\n    wait_for_signal: more\noutput: moved\n")
	inserted := write("inserted.wend.yaml", strings.Replace(twoWaits, "steps:\n", "steps:\n  - id: zero\n    wait_for_signal: zero\n", 1))
	tc := func(args ...string) result {
		return cli(t, time.Minute, env.wendTemporal, append(args, "--temporal", env.addr)...)
	}
	if r := tc("run", file, "--id", "mg", "--detach"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	deadline := time.Now().Add(time.Minute)
	for r := tc("signal", "mg", "one"); r.code != 0; r = tc("signal", "mg", "one") {
		if time.Now().After(deadline) {
			t.Fatalf("signal: %d %s", r.code, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for !strings.Contains(tc("history", "mg").stdout, "SignalApplied") {
		if time.Now().After(deadline) {
			t.Fatal("the signal was not applied within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}

	if r := tc("migrate", "mg", "--to", inserted); r.code != 1 || !regexp.MustCompile(`(?m)^mg \(run \S+\): breaks at event \d+, step zero at `).MatchString(r.stdout) {
		t.Fatalf("migrate to a breaking file: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := tc("migrate", "mg", "--to", added, "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "holds") {
		t.Fatalf("dry run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(tc("history", "mg").stdout, "WorkflowMigrated") {
		t.Fatal("a breaking move or a dry run moved the run")
	}
	if r := tc("migrate", "mg", "--to", added); r.code != 0 || !strings.Contains(r.stdout, "moved from file version") {
		t.Fatalf("migrate: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := tc("migrate", "mg", "--to", added); r.code != 0 || !strings.Contains(r.stdout, "already") {
		t.Fatalf("migrate again: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{"go", "more"} {
		if r := tc("signal", "mg", s); r.code != 0 {
			t.Fatalf("signal %s: %d %s", s, r.code, r.stderr)
		}
	}
	r := tc("wait", "mg")
	if r.code != 0 || !strings.Contains(r.stdout, "moved") {
		t.Fatalf("wait: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if h := tc("history", "mg").stdout; strings.Count(h, "WorkflowMigrated") != 1 {
		t.Fatalf("history:\n%s", h)
	}
}
