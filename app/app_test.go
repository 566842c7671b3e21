package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/app"
	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

const waitSpec = `wend: v1
name: approval
steps:
  - id: approve
    wait_for_signal: approve
`

// TestOpenRefusesAHeldDatabase: a second App over a database another holds is refused with
// boltstore.ErrInUse, which the commands turn into "reach the holder instead".
func TestOpenRefusesAHeldDatabase(t *testing.T) {
	dir := t.TempDir()
	apptest.Open(t, apptest.Options{Dir: dir, Activities: enginetest.Echo{}})
	_, err := app.Open(app.Options{Path: filepath.Join(dir, "wend.db"), Activities: enginetest.Echo{}})
	if !errors.Is(err, boltstore.ErrInUse) {
		t.Fatalf("second Open: %v, want ErrInUse", err)
	}
}

// TestBatchesAndRunsOutliveTheApp: a batch run by one App acts on the runs through its
// engine, and after Close the next App over the database finds the batch closed as it left it
// and the run it cancelled closed; the open run is resumed.
func TestBatchesAndRunsOutliveTheApp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	a, err := app.Open(app.Options{Path: path, Activities: enginetest.Echo{}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c1", "keep"} {
		if _, _, err := a.Engine.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(dir, "approval.wend.yaml"), Source: waitSpec}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.StartBatches(); err != nil {
		t.Fatal(err)
	}
	s := a.Server(nil)
	if s.Batches() == nil {
		t.Fatal("the App's server answers no batches")
	}
	bt, created, err := s.Batches().Create(api.BatchRequest{ID: "b", Operation: api.BatchOpCancel, RunIDs: []string{"c1"}, RPS: 1000})
	if err != nil || !created {
		t.Fatalf("create: %+v, %v, %v", bt, created, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if r, err := a.Engine.WaitClosed(ctx, "c1"); err != nil || r.Status != history.StatusCancelled {
		t.Fatalf("c1: %+v, %v; want cancelled by the batch", r, err)
	}
	for {
		if bt, err = s.Batches().Get("b"); err != nil || !bt.Open() {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("batch still open: %+v", bt)
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.Close()

	b := apptest.Open(t, apptest.Options{Dir: dir, Activities: enginetest.Echo{}})
	if b.Recovered.Resumed != 1 {
		t.Errorf("reopened: resumed %d runs, want 1 (keep)", b.Recovered.Resumed)
	}
	if err := b.StartBatches(); err != nil {
		t.Fatal(err)
	}
	got, err := b.Batches.Get("b")
	if err != nil || got.Status != api.BatchCompleted || got.Done != 1 {
		t.Fatalf("reopened batch: %+v, %v; want completed with 1 done", got, err)
	}
}
