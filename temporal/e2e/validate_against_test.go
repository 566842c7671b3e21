//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// twoWaits waits for "one" at its first step and "go" at its second.
const twoWaits = `wend: v1
name: redeploy
steps:
  - id: first
    wait_for_signal: one
  - id: second
    wait_for_signal: go
`

// TestValidateAgainstTemporal: wend validate --against temporal replays the cluster's open
// runs of a changed file's workflow on it: a step added after the run's position holds, one
// inserted before what ran breaks, naming the event and the step; the plain wend hands the
// command to wend-temporal, and a cluster's closed run is not checked.
func TestValidateAgainstTemporal(t *testing.T) {
	w := startWorker(t, "wend", filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	dir := t.TempDir()
	write := func(name, text string) string { return writeIn(t, dir, name, text) }
	file := write("redeploy.wend.yaml", twoWaits)
	added := write("added.wend.yaml", twoWaits+"  - id: third\n    wait_for_signal: more\n")
	inserted := write("inserted.wend.yaml", strings.Replace(twoWaits, "steps:\n", "steps:\n  - id: zero\n    wait_for_signal: zero\n", 1))
	tc := func(bin string, args ...string) result {
		return cli(t, time.Minute, bin, append(args, "--temporal", env.addr)...)
	}
	for _, id := range []string{"va-open", "va-closed"} {
		if r := tc(env.wendTemporal, "run", file, "--id", id, "--detach"); r.code != 0 {
			t.Fatalf("run %s: %d %s", id, r.code, r.stderr)
		}
	}
	// va-open passes its first step; va-closed is terminated.
	deadline := time.Now().Add(time.Minute)
	for {
		r := tc(env.wendTemporal, "signal", "va-open", "one")
		if r.code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("signal: %d %s", r.code, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r := tc(env.wendTemporal, "terminate", "va-closed", "--reason", "done"); r.code != 0 {
		t.Fatalf("terminate: %d %s", r.code, r.stderr)
	}
	for !strings.Contains(tc(env.wendTemporal, "history", "va-open").stdout, "SignalApplied") {
		if time.Now().After(deadline) {
			t.Fatal("the signal was not applied within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}

	r := tc(env.wend, "validate", "--against", "temporal", added)
	if r.code != 0 || !regexp.MustCompile(`(?m)^va-open \(run \S+\): holds: .*added.wend.yaml takes the same decisions on its history so far$`).MatchString(r.stdout) ||
		strings.Contains(r.stdout, "va-closed") || !strings.Contains(r.stderr, "1 open run checked: 1 hold, 0 would break") {
		t.Fatalf("added: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = tc(env.wendTemporal, "validate", "--against", "temporal", inserted)
	if r.code != 1 || !regexp.MustCompile(`(?m)^va-open \(run \S+\): breaks at event \d+, step zero at .*inserted.wend.yaml:4:5 \(where the run had step first\): `).MatchString(r.stdout) {
		t.Fatalf("inserted: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The same verdict from the run's export.
	export := filepath.Join(dir, "va-open.json")
	if r := tc(env.wendTemporal, "history", "va-open", "--output", export); r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	if e := cli(t, time.Minute, env.wend, "validate", "--against", export, inserted); e.code != 1 || e.stdout != r.stdout {
		t.Fatalf("from the export: exit %d\n%s\nfrom the cluster:\n%s", e.code, e.stdout, r.stdout)
	}
}

// writeIn writes text to the file name in dir and returns its path.
func writeIn(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
