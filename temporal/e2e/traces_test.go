//go:build unix

package e2e

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/otlptest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestTracesOnTemporal: a worker with OTEL_TRACES_EXPORTER=otlp and no sticky cache (so every
// workflow task replays the run's whole history) exports the run's span tree to an OTLP
// receiver, each span once: the run under the traceparent it was started with, its steps
// (activities and a delay) under it, the tries under their steps. The worker's line about the
// failed try carries that try's trace_id and span_id.
func TestTracesOnTemporal(t *testing.T) {
	const accepted = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	rcv := otlptest.Start(t)
	dir := t.TempDir()
	const queue = "e2e-traces"
	flow := filepath.Join(dir, "traced.wend.yaml")
	src := fmt.Sprintf(`wend: v1
name: traced
plugins: {demo: %q}
steps:
  - {id: hi, activity: demo.greet, with: {name: ann}}
  - {id: pause, delay: 500ms}
  - {id: oops, activity: demo.fail, with: {type: Busy, message: not now}, retry: {tries: 2, backoff: [100ms]}}
`, env.demo)
	if err := os.WriteFile(flow, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startProcEnv(t, "cacheless: ready", rcv.Env(),
		env.worker, "--temporal", env.addr, "--task-queue", queue, "--state", filepath.Join(dir, "w"))
	defer w.kill()
	res := cli(t, 2*time.Minute, env.wendTemporal, "run", flow, "--id", "e2e-traces", "--temporal", env.addr, "--task-queue", queue, "--traceparent", accepted)
	if res.code == 0 || !strings.Contains(res.stderr+res.stdout, "not now") {
		t.Fatalf("wend run exited %d, want the run failed by oops:\n%s%s", res.code, res.stdout, res.stderr)
	}
	w.stop(t) // flushes the queued spans

	spans := map[string]*tracepb.Span{}
	for _, s := range rcv.Spans() {
		if spans[s.Name] != nil {
			t.Errorf("span %q exported twice", s.Name)
		}
		spans[s.Name] = s
	}
	want := []struct{ name, parent, outcome string }{
		{"run traced", "", "failed"},
		{"step hi", "run traced", "completed"},
		{"try demo.greet #1", "step hi", "completed"},
		{"step pause", "run traced", "completed"},
		{"step oops", "run traced", "failed"},
		{"try demo.fail #1", "step oops", "failed"},
		{"try demo.fail #2", "step oops", "failed"},
	}
	if len(spans) != len(want) {
		t.Errorf("exported %d distinct spans, want %d", len(spans), len(want))
	}
	for _, wt := range want {
		s := spans[wt.name]
		if s == nil {
			t.Errorf("no span %q", wt.name)
			continue
		}
		if got := hex.EncodeToString(s.TraceId); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("%s: trace %s, want the traceparent's", wt.name, got)
		}
		parent := "00f067aa0ba902b7"
		if wt.parent != "" && spans[wt.parent] != nil {
			parent = hex.EncodeToString(spans[wt.parent].SpanId)
		}
		if got := hex.EncodeToString(s.ParentSpanId); got != parent {
			t.Errorf("%s: parent %s, want %s (%s)", wt.name, got, parent, wt.parent)
		}
		if got := otlptest.Attr(s, "wend.outcome"); got != wt.outcome {
			t.Errorf("%s: outcome %q, want %q", wt.name, got, wt.outcome)
		}
	}
	if s := spans["try demo.fail #1"]; s != nil {
		line := "try 1 of demo.fail failed: " // then the failure, trace_id, span_id
		ids := "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=" + hex.EncodeToString(s.SpanId)
		found := false
		for l := range strings.SplitSeq(w.stderr.String(), "\n") {
			found = found || (strings.Contains(l, line) && strings.HasSuffix(l, ids))
		}
		if !found {
			t.Errorf("no worker line %q...%q:\n%s", line, ids, w.stderr.String())
		}
	}
}
