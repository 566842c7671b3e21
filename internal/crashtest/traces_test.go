//go:build unix

package crashtest

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/otlptest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestTracesAcrossKill: a `wend run` exporting to an OTLP receiver is killed with SIGKILL while a
// try runs; the next `wend run` of the id finishes the run. Together they export each span once,
// in the trace of the --traceparent the run started with, as one tree: the spans the first
// process exported are not emitted again by the replay.
func TestTracesAcrossKill(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	wend, _ := bins(t)
	sink := otlptest.Start(t)

	dir := t.TempDir()
	db, marker := filepath.Join(dir, "wend.db"), filepath.Join(dir, "b-started")
	wf := filepath.Join(dir, "traced.wend.yaml")
	// b's first try marks that it started and sleeps until killed; the next try ends at once.
	src := "wend: v1\nname: traced\nplugins: {sh: {builtin: exec}}\nsteps:\n" +
		"  - {id: a, activity: sh.run, with: {argv: [echo, hi]}}\n" +
		"  - {id: b, activity: sh.run, with: {argv: [\"test -f " + marker + " || { touch " + marker + "; sleep 60; }\"], shell: true}}\n"
	if err := os.WriteFile(wf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	env := append(os.Environ(), sink.Env()...)

	first := exec.Command(wend, "run", "--id", "t1", "--db", db, "--traceparent", traceparent, wf)
	first.Env = env
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for len(sink.Spans()) < 2 || !exists(marker) { // step a and its try exported, b running
		if time.Now().After(deadline) {
			_ = first.Process.Kill()
			t.Fatalf("the first wend exported %d spans, b started %v", len(sink.Spans()), exists(marker))
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = first.Process.Signal(syscall.SIGKILL)
	<-done
	if n := len(sink.Spans()); n != 2 {
		t.Fatalf("before the kill: %d spans, want 2 (step a and its try)", n)
	}

	second := exec.Command(wend, "run", "--id", "t1", "--db", db, wf)
	second.Env = env
	if out, err := second.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}

	spans := sink.Spans()
	byKey := map[string]*tracepb.Span{} // by name and step: a's and b's first tries share a name
	ids := map[string]bool{}
	for _, s := range spans {
		id, key := hex.EncodeToString(s.SpanId), s.Name+" "+stepOf(s)
		if ids[id] || byKey[key] != nil {
			t.Errorf("span %q (%s) exported twice", key, id)
		}
		ids[id], byKey[key] = true, s
		if got := hex.EncodeToString(s.TraceId); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s: trace %s, want the traceparent's", key, got)
		}
	}
	tree := []struct{ key, parent, outcome string }{
		{"run traced ", "", "completed"},
		{"step a steps[0]", "run traced ", "completed"},
		{"try sh.run #1 steps[0]", "step a steps[0]", "completed"},
		{"step b steps[1]", "run traced ", "completed"},
		{"try sh.run #1 steps[1]", "step b steps[1]", "interrupted"}, // in flight at the kill
		{"try sh.run #2 steps[1]", "step b steps[1]", "completed"},
	}
	for _, want := range tree {
		s := byKey[want.key]
		if s == nil {
			t.Errorf("no span %q", want.key)
			continue
		}
		if p := byKey[want.parent]; want.parent != "" && (p == nil || hex.EncodeToString(s.ParentSpanId) != hex.EncodeToString(p.SpanId)) {
			t.Errorf("%s: parent %x, want the span of %q", want.key, s.ParentSpanId, want.parent)
		}
		if got := otlptest.Attr(s, "wend.outcome"); got != want.outcome {
			t.Errorf("%s: outcome %q, want %q", want.key, got, want.outcome)
		}
	}
	if len(spans) != len(tree) {
		t.Errorf("%d spans, want %d", len(spans), len(tree))
	}
}

func stepOf(s *tracepb.Span) string { return otlptest.Attr(s, "wend.step") }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
