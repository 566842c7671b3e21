package commands

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// batchBackend is a cluster's backend that keeps batches: one running, one completed.
type batchBackend struct {
	Backend
	batches map[string]api.Batch
	stopped []string
}

func (b *batchBackend) StartBatch(context.Context, api.Batch, []history.Run) (api.Batch, error) {
	return api.Batch{}, api.NewError(api.CodeUnsupported, "not here")
}

func (b *batchBackend) Batch(_ context.Context, id string) (api.Batch, error) {
	bt, ok := b.batches[id]
	if !ok {
		return api.Batch{}, api.NewError(api.CodeNotFound, `no batch "`+id+`"`)
	}
	return bt, nil
}

func (b *batchBackend) Batches(context.Context) ([]api.Batch, error) {
	return []api.Batch{b.batches["run"], b.batches["done"]}, nil
}

func (b *batchBackend) StopBatch(_ context.Context, id string) (api.Batch, error) {
	b.stopped = append(b.stopped, id)
	bt := b.batches[id]
	bt.Status = api.BatchCancelled
	return bt, nil
}

// TestBatchOnTemporalCLI: wend batch list|show|cancel --temporal read and stop the cluster's
// batches through the backend; cancelling a closed batch stops nothing, an unknown one exits 1.
func TestBatchOnTemporalCLI(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	b := &batchBackend{Backend: local{server.New(nil, history.NewMemStore()), func() error { return nil }}, batches: map[string]api.Batch{
		"run":  {ID: "run", Request: api.BatchRequest{Operation: api.BatchOpCancel}, Status: api.BatchRunning, Total: 4, Done: 1, Next: 1, CreatedAt: t0},
		"done": {ID: "done", Request: api.BatchRequest{Operation: api.BatchOpTerminate}, Status: api.BatchCompleted, Total: 2, Done: 2, Next: 2, CreatedAt: t0},
	}}
	x := &Extensions{OpenTemporal: func(Temporal) (Backend, error) { return b, nil }}
	do := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(&env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, ext: x}, args)
		return code, out.String(), errb.String()
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"list", []string{"batch", "list", "--temporal", "h:7233"}, exitOK, []string{"run ", "cancel", "running", "1/4", "done ", "terminate", "completed", "2/2"}},
		{"show", []string{"batch", "show", "done", "--temporal", "h:7233"}, exitOK, []string{"terminate", "completed"}},
		{"cancel closed", []string{"batch", "cancel", "done", "--temporal", "h:7233"}, exitOK, []string{"batch done is completed: 2 of 2 run(s) acted on"}},
		{"cancel running", []string{"batch", "cancel", "run", "--temporal", "h:7233"}, exitOK, []string{"batch run is cancelled: 1 of 4 run(s) acted on"}},
		{"unknown", []string{"batch", "show", "nope", "--temporal", "h:7233"}, 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := do(c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s%s", code, c.code, out, errs)
			}
			for _, w := range c.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
	if strings.Join(b.stopped, ",") != "run" {
		t.Fatalf("stopped %v, want the running batch alone", b.stopped)
	}
}
