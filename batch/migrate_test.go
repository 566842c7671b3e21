package batch_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/history"
)

// movedSpec is waitSpec with a step after the wait: it holds for every run waiting there.
const movedSpec = waitSpec + "  - {id: thanks, activity: demo.echo, with: moved}\n"

func migrateBatch(t *testing.T, id, where, source string) string {
	t.Helper()
	b, err := json.Marshal(api.BatchRequest{ID: id, Operation: api.BatchOpMigrate, Where: where, RPS: 1000,
		Migrate: &api.BatchMigrate{File: "approval.wend.yaml", Source: source, By: "mallory"}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBatchMigratesEachRunOnce: a migrate batch over a filter moves each open run the text
// holds for, fails with where they part the run it would break (left as it was), and records
// the move as whoever sent the batch (over an unguarded handler, as over the control socket,
// the name the body gives; server's TestMigrateBatchRecordsTheToken covers a token). A resumed
// batch whose runs were moved before the crash moves none twice.
func TestBatchMigratesEachRunOnce(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.withBatches(&batch.MemStore{})
	for _, id := range []string{"m1", "m2"} {
		f.start(id, `{"who":"ann"}`)
		f.waitingForSignal(id)
	}
	f.startSpec("m3", strings.Replace(waitSpec, `hi: "${{ input.who }}"`, `hi: fixed`, 1))
	f.waitingForSignal("m3")
	f.postBatch(migrateBatch(t, "mv", "name = approval", movedSpec), http.StatusCreated)
	bt := f.batchClosed("mv")
	if bt.Status != api.BatchCompleted || bt.Done != 2 || bt.Failed != 1 || len(bt.Failures) != 1 || !strings.Contains(bt.Failures[0].Error, "the new file breaks it at event 2 (step steps[0])") {
		t.Fatalf("closed as %+v, want 2 moved and m3 failed with where they part", bt)
	}
	for _, id := range []string{"m1", "m2"} {
		if n := f.countEvents(id, history.WorkflowMigrated); n != 1 {
			t.Fatalf("%s has %d WorkflowMigrated, want 1", id, n)
		}
	}
	if n := f.countEvents("m3", history.WorkflowMigrated); n != 0 {
		t.Fatalf("the broken run m3 was moved")
	}
	d, _ := f.srv.Show("m1")
	for _, ev := range d.Events {
		if ev.Type == history.WorkflowMigrated {
			if m, _ := history.DataOf[history.Migration](ev); m.By != "mallory" {
				t.Fatalf("moved by %q, want the name the request gave", m.By)
			}
		}
	}

	// A batch store left mid-way by a crash, its runs already moved: resumed, it moves none twice.
	st := &batch.MemStore{}
	var runIDs []string
	for _, id := range []string{"m1", "m2"} {
		d, _ := f.srv.Show(id)
		runIDs = append(runIDs, d.Run.RunID)
	}
	var req api.BatchRequest
	_ = json.Unmarshal([]byte(migrateBatch(t, "again", "name = approval", movedSpec)), &req)
	rec, _ := json.Marshal(api.Batch{ID: "again", Request: req, Status: api.BatchRunning, Matched: 2, Total: 2, Claimed: 2, CreatedAt: time.Now()})
	list, _ := json.Marshal(runIDs)
	if err := st.CreateBatch("again", rec, list); err != nil {
		t.Fatal(err)
	}
	f.withBatches(st)
	if bt := f.batchClosed("again"); bt.Status != api.BatchCompleted || bt.Done != 2 || bt.Failed != 0 {
		t.Fatalf("resumed batch closed as %+v, want 2 done", bt)
	}
	for _, id := range []string{"m1", "m2"} {
		if n := f.countEvents(id, history.WorkflowMigrated); n != 1 {
			t.Fatalf("%s has %d WorkflowMigrated after the resume, want 1", id, n)
		}
	}
}

// TestBatchMigrateRefusals: a migrate batch without a text, with one that fails validation, or
// a migrate field on another operation is refused before any run is touched.
func TestBatchMigrateRefusals(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.withBatches(&batch.MemStore{})
	for _, c := range []struct{ body, code, want string }{
		{`{"operation":"migrate","where":"name = approval"}`, api.CodeBadRequest, "needs migrate.source"},
		{migrateBatch(t, "", "name = approval", "wend: v1\nname: approval\nsteps: [{bogus: 1}]\n"), api.CodeBadWorkflow, "the workflow file is invalid"},
		{`{"operation":"cancel","where":"name = approval","migrate":{"source":"x"}}`, api.CodeBadRequest, "migrate goes with operation migrate only"},
	} {
		code, b := f.do("POST", "/v1/batches", c.body, nil)
		wantError(t, code, b, http.StatusBadRequest, c.code, c.want)
	}
}
