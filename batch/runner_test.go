package batch_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// postBatch posts a batch request and wants it accepted with status code want.
func (f *fixture) postBatch(body string, want int) api.Batch {
	f.t.Helper()
	var bt api.Batch
	if code, b := f.do("POST", "/v1/batches", body, &bt); code != want {
		f.t.Fatalf("post batch %s: %d %s, want %d", body, code, b, want)
	}
	return bt
}

// batchClosed polls GET /v1/batches/{id} until the batch has closed.
func (f *fixture) batchClosed(id string) api.Batch {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var bt api.Batch
		if code, b := f.do("GET", "/v1/batches/"+id, "", &bt); code != 200 {
			f.t.Fatalf("get batch: %d %s", code, b)
		}
		if !bt.Open() {
			return bt
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("batch %s still open: %+v", id, bt)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countEvents counts the events of type typ in the history of the workflow's newest run.
func (f *fixture) countEvents(id string, typ history.EventType) int {
	f.t.Helper()
	p, err := f.srv.Events(id, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, ev := range p.Events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// TestBatchCancelsWhatTheFilterMatches: a cancel batch acts on the open runs its filter
// matches, once each, leaves the others, and reports its counts. (Its workflow ids start with
// p, which no hex run id does, so the id prefix matches them alone.)
func TestBatchCancelsWhatTheFilterMatches(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	bs := f.withBatches(&batch.MemStore{})
	for _, id := range []string{"p1", "p2", "p3", "b1"} {
		f.start(id, `{}`)
		f.waitingForSignal(id)
	}
	f.do("POST", "/v1/runs/p3/cancel", `{}`, nil)
	f.closed("p3")
	bt := f.postBatch(`{"operation":"cancel","where":"id ^= p","reason":"bulk","rps":1000}`, http.StatusCreated)
	if bt.Matched != 3 || bt.Total != 2 || bt.Status != api.BatchRunning {
		t.Fatalf("accepted %+v, want 3 matched, 2 to act on, running", bt)
	}
	bt = f.batchClosed(bt.ID)
	if bt.Status != api.BatchCompleted || bt.Done != 2 || bt.Failed != 0 || bt.Skipped != 0 || bt.Next != 2 {
		t.Fatalf("closed as %+v, want completed with 2 done", bt)
	}
	for _, id := range []string{"p1", "p2"} {
		if r := f.closed(id); r.Status != history.StatusCancelled || f.countEvents(id, history.CancelRequested) != 1 {
			t.Errorf("%s: %s with %d cancel requests, want cancelled once", id, r.Status, f.countEvents(id, history.CancelRequested))
		}
	}
	if by, pending := bs.Counts(); by[api.BatchCompleted] != 1 || len(by) != 1 || pending != 0 {
		t.Errorf("counts %v, %d pending; want 1 completed, none pending", by, pending)
	}
	if d, _ := f.srv.Show("b1"); d.Run.Status != history.StatusRunning {
		t.Errorf("b1, not matched, is %s", d.Run.Status)
	}
	var list struct{ Batches []api.Batch }
	if code, b := f.do("GET", "/v1/batches", "", &list); code != 200 || len(list.Batches) != 1 || list.Batches[0].ID != bt.ID {
		t.Fatalf("list: %d %s", code, b)
	}
}

// TestBatchResumesActingOnceAfterACrash: a batch stored as a crash leaves it (its first
// chunk claimed, its first run already cancelled, its progress not written) resumes, does not
// cancel that run again, and acts on the rest.
func TestBatchResumesActingOnceAfterACrash(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	ids := []string{"c1", "c2", "c3"}
	for _, id := range ids {
		f.start(id, `{}`)
		f.waitingForSignal(id)
	}
	if _, err := f.srv.Cancel(t.Context(), "c1", "bulk"); err != nil {
		t.Fatal(err)
	}
	var runIDs []string
	for _, id := range ids {
		d, _ := f.srv.Show(id)
		runIDs = append(runIDs, d.Run.RunID)
	}
	st := &batch.MemStore{}
	rec, _ := json.Marshal(api.Batch{ID: "b", Request: api.BatchRequest{ID: "b", Operation: api.BatchOpCancel, Where: "id ^= c", Reason: "bulk", RPS: 1000},
		Status: api.BatchRunning, Matched: 3, Total: 3, Claimed: 2, CreatedAt: time.Now()})
	list, _ := json.Marshal(runIDs)
	if err := st.CreateBatch("b", rec, list); err != nil {
		t.Fatal(err)
	}
	f.withBatches(st)
	bt := f.batchClosed("b")
	if bt.Status != api.BatchCompleted || bt.Done != 3 || bt.Skipped != 0 || bt.Failed != 0 {
		t.Fatalf("resumed batch closed as %+v, want completed with 3 done", bt)
	}
	for _, id := range ids {
		f.closed(id)
		if n := f.countEvents(id, history.CancelRequested); n != 1 {
			t.Errorf("%s has %d cancel requests, want 1", id, n)
		}
	}
}

// TestBatchSignalsOnceAndIsIdempotentByID: a signal batch over ids sends each run the signal;
// posting the same request with the same id answers the first batch, another request under
// that id is refused; an unknown run fails with its reason, and the batch completes.
func TestBatchSignalsOnceAndIsIdempotentByID(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.withBatches(&batch.MemStore{})
	f.start("s1", `{}`)
	f.waitingForSignal("s1")
	body := `{"id":"sig","operation":"signal","run_ids":["s1","nope"],"signal":{"name":"approve","data":{"ok":true}}}`
	bt := f.postBatch(body, http.StatusCreated)
	again := f.postBatch(body, http.StatusOK)
	if again.ID != "sig" || again.CreatedAt != bt.CreatedAt {
		t.Fatalf("resend answered %+v, want the first batch", again)
	}
	code, b := f.do("POST", "/v1/batches", `{"id":"sig","operation":"cancel","run_ids":["s1"]}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeIDTaken, "another request")
	code, b = f.do("POST", "/v1/batches", strings.Replace(body, `"nope"`, `"other"`, 1), nil)
	wantError(t, code, b, http.StatusConflict, api.CodeIDTaken, "another request")
	bt = f.batchClosed("sig")
	if bt.Status != api.BatchCompleted || bt.Done != 1 || bt.Failed != 1 || len(bt.Failures) != 1 || bt.Failures[0].RunID != "nope" {
		t.Fatalf("closed as %+v, want 1 done, 1 failed (nope)", bt)
	}
	if n := f.countEvents("s1", history.SignalReceived); n != 1 {
		t.Fatalf("s1 got %d signals, want 1", n)
	}
}

// TestBatchCancelStopsIt: a slow batch cancelled stops between two runs, stays cancelled,
// and leaves the rest alone.
func TestBatchCancelStopsIt(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.withBatches(&batch.MemStore{})
	for i := range 3 {
		id := fmt.Sprintf("k%d", i)
		f.start(id, `{}`)
		f.waitingForSignal(id)
	}
	bt := f.postBatch(`{"operation":"terminate","where":"id ^= k","rps":0.5}`, http.StatusCreated)
	var got api.Batch
	if code, b := f.do("POST", "/v1/batches/"+bt.ID+"/cancel", "", &got); code != 200 || got.Status != api.BatchCancelled {
		t.Fatalf("cancel: %d %s", code, b)
	}
	if got.Done+got.Skipped+got.Failed >= 3 {
		t.Fatalf("cancelled batch acted on every run: %+v", got)
	}
	time.Sleep(50 * time.Millisecond)
	if again := f.batchClosed(bt.ID); again.Status != api.BatchCancelled || again.Done != got.Done {
		t.Fatalf("after cancel: %+v, was %+v", again, got)
	}
}

// TestBatchBadRequests: each bad request is a 400 naming what is wrong; routes without batches
// and unknown batches answer as the API's other errors do.
func TestBatchBadRequests(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	code, b := f.do("GET", "/v1/batches", "", nil)
	wantError(t, code, b, http.StatusNotImplemented, api.CodeUnsupported, "wend serve")
	f.withBatches(&batch.MemStore{})
	many := `["` + strings.Repeat(`x","`, api.MaxBatchIDs) + `x"]`
	for _, c := range []struct{ name, body, fragment string }{
		{"no operation", `{"where":"status = running"}`, "no operation"},
		{"unknown operation", `{"operation":"reset","where":"status = running"}`, `unknown operation "reset"`},
		{"no runs", `{"operation":"cancel"}`, "give where"},
		{"both", `{"operation":"cancel","where":"status = running","run_ids":["a"]}`, "not both"},
		{"bad filter", `{"operation":"cancel","where":"status running"}`, "where:"},
		{"too many ids", `{"operation":"cancel","run_ids":` + many + `}`, "at most 10000"},
		{"empty id", `{"operation":"cancel","run_ids":[""]}`, "run_ids[0] is empty"},
		{"rps", `{"operation":"cancel","run_ids":["a"],"rps":5000}`, "rps 5000"},
		{"signal without name", `{"operation":"signal","run_ids":["a"]}`, "signal.name"},
		{"signal on cancel", `{"operation":"cancel","run_ids":["a"],"signal":{"name":"x"}}`, "operation signal only"},
		{"unknown field", `{"operation":"cancel","run_ids":["a"],"colour":1}`, "colour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, b := f.do("POST", "/v1/batches", c.body, nil)
			wantError(t, code, b, http.StatusBadRequest, api.CodeBadRequest, c.fragment)
		})
	}
	code, b = f.do("GET", "/v1/batches/nope", "", nil)
	wantError(t, code, b, http.StatusNotFound, api.CodeNotFound, `no batch "nope"`)
}

// TestBatchRetriesOnceAcrossACrash: a retry batch stored as a crash leaves it (the first of its
// failed runs already retried, its progress not written) resumes without retrying that run
// again, retries the other, and skips a run that is no longer retryable.
func TestBatchRetriesOnceAcrossACrash(t *testing.T) {
	f, acts := newFlakyFixture(t)
	var failed []string
	for _, id := range []string{"p1", "p2"} {
		f.startSpec(id, chargeSpec)
		failed = append(failed, f.closed(id).RunID)
	}
	acts.Down.Store(false)
	if _, err := f.srv.Retry(t.Context(), failed[0]); err != nil {
		t.Fatal(err)
	}
	f.closed("p1")
	st := &batch.MemStore{}
	rec, _ := json.Marshal(api.Batch{ID: "r", Request: api.BatchRequest{ID: "r", Operation: api.BatchOpRetry, Where: "status = failed", RPS: 1000},
		Status: api.BatchRunning, Matched: 2, Total: 2, Claimed: 1, CreatedAt: time.Now()})
	list, _ := json.Marshal(failed)
	if err := st.CreateBatch("r", rec, list); err != nil {
		t.Fatal(err)
	}
	f.withBatches(st)
	bt := f.batchClosed("r")
	if bt.Status != api.BatchCompleted || bt.Done != 2 || bt.Skipped != 0 || bt.Failed != 0 {
		t.Fatalf("resumed retry batch closed as %+v, want 2 done", bt)
	}
	for _, id := range []string{"p1", "p2"} {
		if r := f.closed(id); r.Status != history.StatusCompleted {
			t.Errorf("%s is %s after the batch, want its retry completed", id, r.Status)
		}
		if runs, _ := f.srv.List(history.RunFilter{WorkflowID: id}); len(runs) != 2 {
			t.Errorf("%s has %d runs, want the failed one and one retry", id, len(runs))
		}
	}
	// Retried already, the failed runs are not retryable again: a new batch over them skips both.
	again := f.postBatch(`{"operation":"retry","run_ids":["`+failed[0]+`","`+failed[1]+`"],"rps":1000}`, http.StatusCreated)
	if bt := f.batchClosed(again.ID); bt.Done != 0 || bt.Skipped != 2 || bt.SkippedBy["not retryable"] != 2 {
		t.Fatalf("second retry batch %+v, want both skipped as not retryable", bt)
	}
}

// TestBatchPurges: a purge batch purges the closed runs its filter selects (the store's
// purge candidates) one by one, and skips an id that is gone.
func TestBatchPurges(t *testing.T) {
	st := &storetest.Purging{MemStore: history.NewMemStore(), Candidates: []history.Run{
		{RunID: "a", Name: "nightly", Status: history.StatusCompleted},
		{RunID: "b", Name: "nightly", Status: history.StatusFailed},
	}}
	f := newFixture(t, st)
	f.withBatches(&batch.MemStore{})
	bt := f.batchClosed(f.postBatch(`{"operation":"purge","where":"status = completed","rps":1000}`, http.StatusCreated).ID)
	if bt.Total != 1 || bt.Done != 1 {
		t.Fatalf("purge by filter: %+v, want a purged", bt)
	}
	bt = f.batchClosed(f.postBatch(`{"operation":"purge","run_ids":["b","gone"],"rps":1000}`, http.StatusCreated).ID)
	if bt.Done != 1 || bt.Skipped != 1 || bt.SkippedBy["gone"] != 1 {
		t.Fatalf("purge by ids: %+v, want b purged and gone skipped", bt)
	}
	want := [][]string{{"a"}, {"b"}, {"gone"}}
	if fmt.Sprint(st.Purged) != fmt.Sprint(want) {
		t.Fatalf("purge calls %v, want %v", st.Purged, want)
	}
}
