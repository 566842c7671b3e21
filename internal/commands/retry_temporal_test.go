package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// retriedBackend is a cluster's backend whose Retry answers rt; the rest reads st.
type retriedBackend struct {
	Backend
	rt  api.Retried
	ids []string
}

func (b *retriedBackend) Retry(_ context.Context, id string) (api.Retried, error) {
	b.ids = append(b.ids, id)
	return b.rt, nil
}

// TestRetryOnTemporalSaysWhereItRuns: wend retry --temporal names the cluster, not a local
// database, as what drives the new run, and --follow follows it there to its output.
func TestRetryOnTemporalSaysWhereItRuns(t *testing.T) {
	st := history.NewMemStore()
	t0 := time.Unix(0, 0).UTC()
	rec := history.Run{WorkflowID: "wf", RunID: "r2", Name: "n", Status: history.StatusCompleted, ClosedReason: history.ClosedCompleted,
		StartedAt: t0, ClosedAt: t0, LastSeq: 2}
	evs := []history.Event{
		{Seq: 1, Type: history.WorkflowStarted, Time: t0, Data: history.MustData(history.Started{WorkflowID: "wf", RunID: "r2", RetryOf: "r1"})},
		{Seq: 2, Type: history.WorkflowCompleted, Time: t0, Data: history.MustData(history.Closed{Output: json.RawMessage(`{"ok":true}`)})},
	}
	if err := st.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: rec, Events: evs}}}); err != nil {
		t.Fatal(err)
	}
	b := &retriedBackend{Backend: local{server.New(nil, st), func() error { return nil }}, rt: api.Retried{Run: rec, RetryOf: "r1"}}
	x := &Extensions{OpenTemporal: func(Temporal) (Backend, error) { return b, nil }}
	do := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(&env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, ext: x}, args)
		return code, out.String(), errb.String()
	}
	code, out, errs := do("retry", "wf", "--temporal", "h:7233")
	if code != exitOK || out != "r2\n" || errs != "wend retry: run r2 of wf resumes failed run r1 on Temporal h:7233 (namespace default)\n" {
		t.Fatalf("retry --temporal = %d, %q, %q", code, out, errs)
	}
	code, out, errs = do("retry", "wf", "--temporal", "h:7233", "--follow")
	if code != exitOK || strings.TrimSpace(out) != `{"ok":true}` || !strings.Contains(errs, "on Temporal h:7233") {
		t.Fatalf("retry --temporal --follow = %d, %q, %q", code, out, errs)
	}
	if strings.Join(b.ids, ",") != "wf,wf" {
		t.Fatalf("retried %v", b.ids)
	}
}
