package commands

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// startRecorder is a backend that keeps the start requests it gets.
type startRecorder struct {
	local
	got []engine.StartRequest
}

func (s *startRecorder) Start(ctx context.Context, req engine.StartRequest) (api.Started, error) {
	s.got = append(s.got, req)
	return api.Started{Run: history.Run{WorkflowID: "w", RunID: "r1"}, Started: true}, nil
}

// TestRunOnTemporalPassesTraceParent: `wend run --temporal --traceparent` hands the
// traceparent to the Temporal backend, which keeps it for the run's tries; a malformed one is
// a usage error before any start.
func TestRunOnTemporalPassesTraceParent(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	file := filepath.Join(t.TempDir(), "w.wend.yaml")
	if err := os.WriteFile(file, []byte("wend: v1\nname: w\nsteps: [{delay: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &startRecorder{local: local{server.New(nil, history.NewMemStore()), func() error { return nil }}}
	x := &Extensions{OpenTemporal: func(Temporal) (Backend, error) { return rec, nil }}
	do := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(&env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, ext: x}, args)
		return code, errb.String()
	}
	if code, errs := do("run", "--temporal", "h:1", "--detach", "--traceparent", tp, file); code != exitOK || len(rec.got) != 1 || rec.got[0].TraceParent != tp {
		t.Fatalf("run = %d, %q; starts %+v; want the traceparent passed", code, errs, rec.got)
	}
	if code, errs := do("run", "--temporal", "h:1", "--detach", "--traceparent", "00-nope", file); code != exitUsage || !strings.Contains(errs, "--traceparent") || len(rec.got) != 1 {
		t.Fatalf("malformed: %d, %q; %d starts", code, errs, len(rec.got))
	}
}
