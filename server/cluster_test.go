package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/engine"
)

// fakeCluster records which of its methods a request reached.
type fakeCluster struct{ calls []string }

func (f *fakeCluster) note(m string) { f.calls = append(f.calls, m) }

var clusterRun = history.Run{RunID: "r1", WorkflowID: "w1", Name: "flow", Status: history.StatusRunning}

func (f *fakeCluster) List(q api.ListQuery, limit int) ([]history.Run, error) {
	f.note("List")
	return []history.Run{clusterRun}, nil
}
func (f *fakeCluster) Resolve(id string) (history.Run, error) {
	f.note("Resolve")
	if id != "w1" {
		return history.Run{}, UnknownRun(id)
	}
	return clusterRun, nil
}
func (f *fakeCluster) Events(id string, after uint64) (api.EventPage, error) {
	f.note("Events")
	return api.EventPage{Run: clusterRun, Events: []history.Event{}}, nil
}
func (f *fakeCluster) Show(id string) (api.RunDetail, error) {
	f.note("Show")
	return api.RunDetail{}, nil
}
func (f *fakeCluster) Start(ctx context.Context, req engine.StartRequest) (api.Started, error) {
	f.note("Start")
	return api.Started{Run: clusterRun, Started: true}, nil
}
func (f *fakeCluster) SendSignal(ctx context.Context, id string, req api.SignalRequest) (api.SignalSent, error) {
	f.note("SendSignal")
	return api.SignalSent{Run: clusterRun}, nil
}
func (f *fakeCluster) Cancel(ctx context.Context, id, reason string) (history.Run, error) {
	f.note("Cancel")
	return clusterRun, nil
}
func (f *fakeCluster) Terminate(ctx context.Context, id, reason string) (history.Run, error) {
	f.note("Terminate")
	return clusterRun, nil
}
func (f *fakeCluster) Retry(ctx context.Context, id string) (api.Retried, error) {
	f.note("Retry")
	return api.Retried{}, nil
}
func (f *fakeCluster) Repair(ctx context.Context, id string) (api.RepairReport, error) {
	f.note("Repair")
	return api.RepairReport{Rebuilt: []string{}}, nil
}
func (f *fakeCluster) Wait(ctx context.Context, id string, timeout time.Duration) (api.Outcome, error) {
	f.note("Wait")
	return api.Outcome{Run: clusterRun}, nil
}
func (f *fakeCluster) Export(id string) (*export.Document, error) {
	f.note("Export")
	return &export.Document{}, nil
}
func (f *fakeCluster) Query(id, expr string) (api.QueryResult, error) {
	f.note("Query")
	return api.QueryResult{}, nil
}
func (f *fakeCluster) Check() (api.CheckReport, error) {
	f.note("Check")
	return api.CheckReport{}, nil
}

// TestOverHandsRequestsToTheCluster: every route of a Server made by Over reaches the
// cluster's method of the same meaning, and the edge's checks still refuse bad input before
// the cluster sees it.
func TestOverHandsRequestsToTheCluster(t *testing.T) {
	const flow = "wend: v1\nname: flow\nsteps:\n  - id: a\n    delay: 1s\n"
	src, _ := json.Marshal(flow)
	for _, c := range []struct {
		method, path, body string
		wantCode           int
		wantCalls          string // the cluster's methods reached, in order
	}{
		{"GET", "/v1/runs", "", 200, "List"},
		{"GET", "/v1/runs/w1", "", 200, "Show"},
		{"GET", "/v1/runs/w1/events?after=3", "", 200, "Events"},
		{"GET", "/v1/runs/w1/wait?timeout=1s", "", 200, "Wait"},
		{"GET", "/v1/runs/w1/export", "", 200, "Export"},
		{"GET", "/v1/runs/w1/query?expr=input", "", 200, "Query"},
		{"GET", "/v1/check", "", 200, "Check"},
		{"POST", "/v1/runs", `{"spec_file": "f.wend.yaml", "source": ` + string(src) + `, "id": "w2"}`, 201, "Start"},
		{"POST", "/v1/runs/w1/signals", `{"name": "go"}`, 200, "SendSignal"},
		{"POST", "/v1/runs/w1/cancel", `{"reason": "r"}`, 200, "Cancel"},
		{"POST", "/v1/runs/w1/terminate", `{"reason": "r"}`, 200, "Terminate"},
		{"POST", "/v1/runs/w1/retry", ``, 201, "Retry"},
		// Refused at the edge: the cluster is never asked.
		{"POST", "/v1/runs", `{"spec_file": "f.wend.yaml", "source": "wend: v1\nname: x\n", "id": "w3"}`, 400, ""},
		{"POST", "/v1/runs", `{"spec_file": "f.wend.yaml", "source": ` + string(src) + `, "id": "bad id\n"}`, 400, ""},
		{"POST", "/v1/runs/w1/signals", `{"name": "go", "data": {"a": }}`, 400, ""},
		{"POST", "/v1/runs/w1/signals", `{"name": ""}`, 400, ""},
		{"GET", "/v1/runs/w1/query?expr=(", "", 400, ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			f := &fakeCluster{}
			s := Over(f)
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != c.wantCode {
				t.Fatalf("%d %s; want %d", w.Code, w.Body, c.wantCode)
			}
			if got := strings.Join(f.calls, ","); got != c.wantCalls {
				t.Errorf("the cluster got %q; want %q", got, c.wantCalls)
			}
		})
	}
}

// TestOverResolvesThroughTheCluster: the UI's lookups (Resolve, List) read the cluster, and an
// unknown id keeps the local error.
func TestOverResolvesThroughTheCluster(t *testing.T) {
	s := Over(&fakeCluster{})
	if r, err := s.Resolve("w1"); err != nil || r.RunID != "r1" {
		t.Fatalf("Resolve(w1) = %+v, %v", r, err)
	}
	var e *api.Error
	if _, err := s.Resolve("nope"); !errors.As(err, &e) || e.Code != api.CodeNotFound {
		t.Fatalf("Resolve(nope) = %v; want not_found", err)
	}
	if runs, err := s.List(history.RunFilter{}); err != nil || len(runs) != 1 {
		t.Fatalf("List = %v, %v", runs, err)
	}
	if _, err := s.RollPlugins(""); !errors.As(err, &e) || e.Status != http.StatusNotImplemented {
		t.Fatalf("RollPlugins = %v; want 501 unsupported", err)
	}
}
