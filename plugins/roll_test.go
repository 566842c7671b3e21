//go:build linux

package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/proctest"
)

// testPluginV2 is the test plugin built with version "v2" (the default build says "dev").
var testPluginV2 = sync.OnceValues(func() (string, error) {
	out := filepath.Join(bins.dir, "testplugin-v2")
	cmd := exec.Command("go", "build", "-ldflags=-X main.version=v2", "-o", out, "./internal/testplugin")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", &exec.ExitError{Stderr: b}
	}
	return out, nil
})

// install writes the binary at src to dst the way a deploy should: beside it, then renamed
// over it, so the host never reads a half-written file. It returns the binary's sha256.
func install(t *testing.T, src, dst string) string {
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

type served struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
	Build   string `json:"-"`
}

// version calls the test plugin's version activity and returns what served it.
func version(t *testing.T, h *Host, plugin string) served {
	t.Helper()
	var v served
	out, err := h.ExecuteBuild(context.Background(), call(plugin, "version", nil), nil, func(sha string) { v.Build = sha })
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// current is plugin's current process.
func current(h *Host, plugin string) *process {
	h.mu.Lock()
	s := h.slots[plugin]
	h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// uses is how many tries run on plugin's current process.
func uses(h *Host, plugin string) int {
	p := current(h, plugin)
	p.useMu.Lock()
	defer p.useMu.Unlock()
	return p.uses
}

// Replacing a plugin's executable between tries rolls it: the next try starts the new build
// in a new process, a try in flight finishes on the old one, which then stops, and each try
// names the build that served it.
func TestRollOnChangedExecutable(t *testing.T) {
	v2, err := testPluginV2()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plug")
	oldSum := install(t, bins.testPlugin, path)
	h, logs := newHost(t, Options{}, Config{Name: "p", Command: []string{"./plug"}, Dir: dir})

	first := version(t, h, "p")
	if first.Version != "dev" || first.Build != oldSum {
		t.Fatalf("first try: %+v, want version dev on build %s", first, oldSum)
	}
	if again := version(t, h, "p"); again.PID != first.PID {
		t.Fatalf("unchanged file: a second process %d served (first %d)", again.PID, first.PID)
	}

	// A try in flight on the old build while the file is replaced.
	gate := filepath.Join(dir, "gate")
	type result struct {
		out   json.RawMessage
		err   error
		build string
	}
	inflight := make(chan result, 1)
	go func() {
		var r result
		r.out, r.err = h.ExecuteBuild(context.Background(), call("p", "gate", map[string]string{"path": gate}), nil, func(sha string) { r.build = sha })
		inflight <- r
	}()
	for uses(h, "p") == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	old := current(h, "p")
	newSum := install(t, v2, path)

	next := version(t, h, "p")
	if next.Version != "v2" || next.PID == first.PID || next.Build != newSum {
		t.Fatalf("after the swap: %+v, want version v2 in a new process on build %s (old pid %d)", next, newSum, first.PID)
	}
	if n := len(proctest.Group(first.PID)); n == 0 {
		t.Fatal("the old process stopped with a try still in flight")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-inflight
	if r.err != nil || string(r.out) != jsonInt(first.PID) || r.build != oldSum {
		t.Fatalf("the try in flight: %s, %v on build %s; want it to finish on the old process %d, build %s", r.out, r.err, r.build, first.PID, oldSum)
	}
	select { // the old process stops once idle: no orphan
	case <-old.stopped:
	case <-time.After(time.Minute): // a bound on a hang, not a measure of speed
		t.Fatal("the old process did not stop once idle")
	}
	waitGroupGone(t, first.PID, 10*time.Second)

	st := h.Stats()
	if st.Processes != 1 || st.Starts != 2 || st.Rolls != 1 || st.Restarts != 0 {
		t.Fatalf("stats %+v, want 1 process, 2 starts, 1 roll, 0 restarts", st)
	}
	if again := version(t, h, "p"); again.PID != next.PID {
		t.Fatalf("a third process %d served after the roll (new %d)", again.PID, next.PID)
	}
	t.Logf("plugin log:\n%s", logs)
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Host.Roll starts a new process whether or not the file changed; a plugin that has not
// started is left alone; a pinned plugin whose file no longer matches its sha256 refuses the
// roll with the checksum error and keeps its verified process.
func TestRollForced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plug")
	sum := install(t, bins.testPlugin, path)
	h, _ := newHost(t, Options{},
		Config{Name: "p", Command: []string{"./plug"}, Dir: dir},
		Config{Name: "pinned", Command: []string{"./plug"}, Dir: dir, SHA256: sum},
		Config{Name: "idle", Command: []string{"./plug"}, Dir: dir})
	old := version(t, h, "p")
	pinned := version(t, h, "pinned")

	rolled := h.Roll("p")
	if len(rolled) != 1 || rolled[0].Err != nil || rolled[0].OldPID != old.PID || rolled[0].NewPID == old.PID ||
		rolled[0].OldSHA256 != sum || rolled[0].NewSHA256 != sum {
		t.Fatalf("Roll(p) = %+v, want one new process of build %s replacing %d", rolled, sum, old.PID)
	}
	if now := version(t, h, "p"); now.PID != rolled[0].NewPID {
		t.Fatalf("after Roll a try ran in %d, want the new process %d", now.PID, rolled[0].NewPID)
	}
	waitGroupGone(t, old.PID, 10*time.Second)

	v2, err := testPluginV2()
	if err != nil {
		t.Fatal(err)
	}
	install(t, v2, path)
	all := h.Roll("")
	if len(all) != 2 || all[0].Plugin != "p" || all[1].Plugin != "pinned" {
		t.Fatalf("Roll() = %+v, want p and pinned (idle never started)", all)
	}
	if all[0].Err != nil || all[0].NewSHA256 == sum {
		t.Fatalf("Roll() of p: %+v, want the new build", all[0])
	}
	ae := activityError(t, all[1].Err)
	if ae.Type != TypeChecksumMismatch || !ae.NonRetryable || all[1].NewPID != 0 {
		t.Fatalf("Roll() of pinned: %+v, want a non-retryable %s", all[1], TypeChecksumMismatch)
	}
	if n := len(proctest.Group(pinned.PID)); n == 0 {
		t.Fatal("a refused roll stopped the verified process")
	}
	if got := h.Roll("nosuch"); len(got) != 0 {
		t.Fatalf("Roll(nosuch) = %+v", got)
	}
}

// The build of a plugin is its program's file, or the script an interpreter runs.
func TestWatchedFile(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "plugin.py")
	if err := os.WriteFile(script, []byte("print()"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd     []string
		program string
		want    string
	}{
		{[]string{"./plug"}, "/abs/plug", "/abs/plug"},
		{[]string{"python3", "-u", "plugin.py"}, "/usr/bin/python3", script},
		{[]string{"python3", "missing.py"}, "/usr/bin/python3", "/usr/bin/python3"},
		{[]string{"wend-plugin-x"}, "/usr/local/bin/wend-plugin-x", "/usr/local/bin/wend-plugin-x"},
	} {
		if got := watched(Config{Command: tc.cmd, Dir: dir}, tc.program); got != tc.want {
			t.Errorf("watched(%q) = %s, want %s", tc.cmd, got, tc.want)
		}
	}
}

// BenchmarkBuildUnchanged is what rolling adds to every call while the program's file stays
// the same: one stat.
func BenchmarkBuildUnchanged(b *testing.B) {
	sum, st, err := hashFile(bins.testPlugin)
	if err != nil {
		b.Fatal(err)
	}
	bd := build{path: bins.testPlugin, stamp: st, sha256: sum}
	for b.Loop() {
		if bd.changed() {
			b.Fatal("changed")
		}
	}
}

func BenchmarkHashProgram(b *testing.B) {
	for b.Loop() {
		if _, _, err := hashFile(bins.testPlugin); err != nil {
			b.Fatal(err)
		}
	}
}
