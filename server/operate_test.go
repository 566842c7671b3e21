package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/testkit/enginetest"
)

func newFlakyFixture(t *testing.T) (*fixture, *enginetest.Outage, history.Store) {
	t.Helper()
	store := history.NewMemStore()
	acts := &enginetest.Outage{}
	acts.Down.Store(true)
	return fixtureActs(t, store, acts), acts, store
}

// startSpec starts a run of src under id and returns its record.
func (f *fixture) startSpec(id, src string) history.Run {
	f.t.Helper()
	body, _ := json.Marshal(engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, id+".wend.yaml"), Source: src})
	var st api.Started
	if code, b := f.do("POST", "/v1/runs", string(body), &st); code != http.StatusCreated {
		f.t.Fatalf("start %s: %d %s", id, code, b)
	}
	return st.Run
}

// closed waits until the workflow's newest run has closed.
func (f *fixture) closed(id string) history.Run {
	f.t.Helper()
	var o api.Outcome
	if code, b := f.do("GET", "/v1/runs/"+id+"/wait?timeout=5s", "", &o); code != 200 || !o.Closed {
		f.t.Fatalf("wait %s: %d %s", id, code, b)
	}
	return o.Run
}

const chargeSpec = `wend: v1
name: pay
plugins: {p: ./p}
steps:
  - {id: reserve, activity: p.reserve, with: 1}
  - {id: charge, activity: p.charge, with: 2}
output: "${{ [steps.reserve.output, steps.charge.output] }}"
`

func TestTerminateRoute(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	st := f.start("t", `{"who":"x"}`)
	f.waitFor("t", waitingForSignal)
	var tr struct{ Run history.Run }
	if code, b := f.do("POST", "/v1/runs/t/terminate", `{"reason":"stuck"}`, &tr); code != 200 ||
		tr.Run.RunID != st.Run.RunID || tr.Run.ClosedReason != history.ClosedTerminated {
		t.Fatalf("terminate: %d %s", code, b)
	}
	doc, err := f.srv.Export("t")
	if err != nil {
		t.Fatal(err)
	}
	if f := doc.Workflow.Failure; f == nil || f.FailureCategory != history.CategoryTerminated || f.Message != "terminated: stuck" {
		t.Fatalf("failure after terminate: %+v", f)
	}
	for _, ev := range doc.HistoryEvents {
		if ev.Type == string(history.CompensationStarted) || ev.Type == string(history.WorkflowCancelled) {
			t.Fatalf("terminate ran the cancel path: %s", ev.Type)
		}
	}
	code, b := f.do("POST", "/v1/runs/t/terminate", `{}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeRunClosed, "is cancelled: a finished run cannot be terminated")
}

func TestRetryRoute(t *testing.T) {
	f, acts, _ := newFlakyFixture(t)
	f.startSpec("pay", chargeSpec)
	failed := f.closed("pay")
	if failed.Status != history.StatusFailed {
		t.Fatalf("first run %s", failed.Status)
	}
	acts.Down.Store(false)
	var rt api.Retried
	if code, b := f.do("POST", "/v1/runs/pay/retry", "", &rt); code != http.StatusCreated || rt.RetryOf != failed.RunID ||
		rt.Run.RunID == failed.RunID || rt.Run.WorkflowID != "pay" {
		t.Fatalf("retry: %d %s", code, b)
	}
	done := f.closed("pay")
	if done.RunID != rt.Run.RunID || done.Status != history.StatusCompleted {
		t.Fatalf("retried run: %+v", done)
	}

	// The failed run is no longer the newest; the completed one cannot be retried.
	code, b := f.do("POST", "/v1/runs/"+failed.RunID+"/retry", `{}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeNotRetryable, "is not the newest run of pay (that is "+done.RunID)
	code, b = f.do("POST", "/v1/runs/pay/retry", `{}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeNotRetryable, "is completed (completed); only failed runs can be retried")
	if _, err := f.srv.Retry(context.Background(), "pay"); !errors.Is(err, engine.ErrNotRetryable) {
		t.Fatalf("Retry of a completed run: %v", err)
	}
}

func TestRetryRefusesCompensatedRun(t *testing.T) {
	f, _, _ := newFlakyFixture(t)
	f.startSpec("saga", `wend: v1
name: saga
plugins: {p: ./p}
compensate_on_failure: true
steps:
  - {activity: p.reserve, compensate_with: {activity: p.release}}
  - activity: p.charge
`)
	f.closed("saga")
	code, b := f.do("POST", "/v1/runs/saga/retry", "", nil)
	wantError(t, code, b, http.StatusConflict, api.CodeNotRetryable, "was compensated after it failed")
}

func TestRepairRoute(t *testing.T) {
	f, _, store := newFlakyFixture(t)
	f.startSpec("r", "wend: v1\nname: r\nsteps: [{delay: 1h}]\n")
	var rep api.RepairReport
	if code, b := f.do("POST", "/v1/runs/r/repair", "", &rep); code != 200 || rep.Runs != 1 || len(rep.Rebuilt) != 0 {
		t.Fatalf("repair of a healthy run: %d %s", code, b)
	}
	// Lose the timer's task, as a bug or a hand-edited database would.
	tasks, _ := store.Tasks()
	runs, _ := store.Runs(history.RunFilter{WorkflowID: "r"})
	if len(tasks) != 1 || len(runs) != 1 {
		t.Fatalf("tasks %+v runs %+v", tasks, runs)
	}
	if err := store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: runs[0]}}, DeleteTasks: []string{tasks[0].ID}}); err != nil {
		t.Fatal(err)
	}
	if code, b := f.do("POST", "/v1/repair", `{}`, &rep); code != 200 || rep.Runs != 1 || len(rep.Rebuilt) != 1 ||
		rep.Rebuilt[0] != runs[0].RunID+": "+tasks[0].ID {
		t.Fatalf("repair all: %d %s", code, b)
	}
	if after, _ := store.Tasks(); len(after) != 1 || after[0].ID != tasks[0].ID {
		t.Fatalf("tasks after repair: %+v", after)
	}
}

func TestExportRoute(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.start("e", `{"who":"ann"}`)
	f.waitFor("e", waitingForSignal)
	var doc export.Document
	if code, b := f.do("GET", "/v1/runs/e/export", "", &doc); code != 200 || doc.Schema != export.SchemaName ||
		doc.Workflow.WorkflowID != "e" || doc.Workflow.Status != history.StatusRunning {
		t.Fatalf("export: %d %s", code, b)
	}
	d, _ := f.srv.Show("e")
	if len(doc.HistoryEvents) != len(d.Events) || len(doc.Activities) != 1 || doc.Activities[0].Status != "completed" {
		t.Fatalf("export has %d events (show %d), activities %+v", len(doc.HistoryEvents), len(d.Events), doc.Activities)
	}
}

// A resend with the same signal id reaches the run once: the second wait stays open until a
// signal with another id comes.
func TestSignalIDIsIdempotent(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.startSpec("s", "wend: v1\nname: s\nsteps: [{wait_for_signal: a}, {wait_for_signal: a}]\n")
	for range 2 {
		if code, b := f.do("POST", "/v1/runs/s/signals", `{"name":"a","id":"send-1"}`, nil); code != 200 {
			t.Fatalf("signal: %d %s", code, b)
		}
	}
	d := f.waitFor("s", func(d api.RunDetail) bool { return waitingForSignal(d) && d.Waits[0].Step == "steps[1]" })
	if !d.Run.Open() || len(d.Signals) != 0 {
		t.Fatalf("after a resend: open %v, pending signals %+v", d.Run.Open(), d.Signals)
	}
	if code, b := f.do("POST", "/v1/runs/s/signals", `{"name":"a","id":"send-2"}`, nil); code != 200 {
		t.Fatalf("signal: %d %s", code, b)
	}
	if r := f.closed("s"); r.Status != history.StatusCompleted {
		t.Fatalf("run %s", r.Status)
	}
}

func TestOperateBadInput(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.start("w", `{"who":"x"}`)
	tests := []struct {
		name, method, path, body string
		status                   int
		code, fragment           string
	}{
		{"terminate unknown", "POST", "/v1/runs/nope/terminate", `{}`, 404, api.CodeNotFound, `no workflow or run "nope"`},
		{"terminate empty body", "POST", "/v1/runs/w/terminate", ``, 400, api.CodeBadRequest, "empty body"},
		{"terminate unknown field", "POST", "/v1/runs/w/terminate", `{"why":"x"}`, 400, api.CodeBadRequest, `unknown field "why"`},
		{"retry unknown", "POST", "/v1/runs/nope/retry", ``, 404, api.CodeNotFound, `no workflow or run "nope"`},
		{"retry a running run", "POST", "/v1/runs/w/retry", ``, 409, api.CodeNotRetryable, "is running (); only failed runs can be retried"},
		{"retry with a body", "POST", "/v1/runs/w/retry", `{"from":"steps[0]"}`, 400, api.CodeBadRequest, `unknown field "from"`},
		{"retry not JSON", "POST", "/v1/runs/w/retry", `retry`, 400, api.CodeBadRequest, "bad request body"},
		{"repair unknown", "POST", "/v1/runs/nope/repair", ``, 404, api.CodeNotFound, `no workflow or run "nope"`},
		{"repair with a body", "POST", "/v1/repair", `{"id":"w"}`, 400, api.CodeBadRequest, `unknown field "id"`},
		{"repair wrong method", "GET", "/v1/repair", ``, 404, api.CodeNotFound, "no route GET /v1/repair"},
		{"export unknown", "GET", "/v1/runs/nope/export", ``, 404, api.CodeNotFound, `no workflow or run "nope"`},
		{"export wrong method", "POST", "/v1/runs/w/export", `{}`, 404, api.CodeNotFound, "no route POST"},
		{"signal id not a string", "POST", "/v1/runs/w/signals", `{"name":"a","id":7}`, 400, api.CodeBadRequest, "bad request body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.do(tt.method, tt.path, tt.body, nil)
			wantError(t, code, body, tt.status, tt.code, tt.fragment)
		})
	}
}

// Without an engine: unknown ids are 404s, repair of a store with no open run has nothing to
// do, and steering an open run is a 501.
func TestOperateReadOnly(t *testing.T) {
	ctx := context.Background()
	s := New(nil, history.NewMemStore())
	if _, err := s.Terminate(ctx, "x", ""); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("terminate unknown: %v", err)
	}
	if _, err := s.Retry(ctx, "x"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("retry unknown: %v", err)
	}
	if rep, err := s.Repair(ctx, ""); err != nil || rep.Runs != 0 || rep.Rebuilt == nil {
		t.Fatalf("repair of an empty store: %+v %v", rep, err)
	}

	f := newFixture(t, history.NewMemStore())
	f.start("w", `{"who":"x"}`)
	ro := New(nil, f.srv.store)
	var se *api.Error
	if _, err := ro.Repair(ctx, "w"); !errors.As(err, &se) || se.Code != api.CodeUnsupported {
		t.Fatalf("repair of an open run, read only: %v", err)
	}
	if _, err := ro.Retry(ctx, "w"); !errors.As(err, &se) || se.Code != api.CodeUnsupported {
		t.Fatalf("retry, read only: %v", err)
	}
	if strings.TrimSpace(se.Message) == "" {
		t.Fatal("empty message")
	}
}
