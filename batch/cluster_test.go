package batch_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// batchCluster is a cluster that runs batches: it keeps each started batch with the runs it
// was given, and answers its progress from done (runs acted on so far).
type batchCluster struct {
	server.Cluster // the methods a batch does not call: nil, they panic
	runs           []history.Run
	started        map[string][]string // run ids by batch id
	batches        map[string]api.Batch
	stopped        []string
}

func newBatchCluster(runs ...history.Run) *batchCluster {
	return &batchCluster{runs: runs, started: map[string][]string{}, batches: map[string]api.Batch{}}
}

func (c *batchCluster) List(q api.ListQuery, limit int) ([]history.Run, error) {
	var out []history.Run
	for _, r := range c.runs {
		if q.Match(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (c *batchCluster) Resolve(id string) (history.Run, error) {
	for _, r := range c.runs {
		if r.RunID == id || r.WorkflowID == id {
			return r, nil
		}
	}
	return history.Run{}, server.UnknownRun(id)
}

func (c *batchCluster) StartBatch(_ context.Context, bt api.Batch, runs []history.Run) (api.Batch, error) {
	if _, ok := c.batches[bt.ID]; ok {
		return api.Batch{}, api.NewError(api.CodeIDTaken, "batch exists")
	}
	for _, r := range runs {
		c.started[bt.ID] = append(c.started[bt.ID], r.RunID)
	}
	// The cluster knows the operation and reason, not the filter: as Temporal's batches.
	c.batches[bt.ID] = api.Batch{ID: bt.ID, Request: api.BatchRequest{ID: bt.ID, Operation: bt.Request.Operation, Reason: bt.Request.Reason},
		Status: api.BatchRunning, Total: len(runs), Matched: len(runs), CreatedAt: bt.CreatedAt}
	return c.batches[bt.ID], nil
}

func (c *batchCluster) Batch(_ context.Context, id string) (api.Batch, error) {
	bt, ok := c.batches[id]
	if !ok {
		return api.Batch{}, api.NewError(api.CodeNotFound, "no batch")
	}
	return bt, nil
}

func (c *batchCluster) Batches(context.Context) ([]api.Batch, error) {
	var out []api.Batch
	for _, bt := range c.batches {
		out = append(out, bt)
	}
	return out, nil
}

func (c *batchCluster) StopBatch(_ context.Context, id string) (api.Batch, error) {
	c.stopped = append(c.stopped, id)
	bt := c.batches[id]
	bt.Status = api.BatchCancelled
	c.batches[id] = bt
	return bt, nil
}

// progress makes the cluster report n of batch id's runs done, and closes it when all are.
func (c *batchCluster) progress(id string, n int) {
	bt := c.batches[id]
	bt.Done, bt.Next = n, n
	if n == bt.Total {
		bt.Status = api.BatchCompleted
	}
	c.batches[id] = bt
}

func clusterRunOf(wid, rid, status string) history.Run {
	return history.Run{RunID: rid, WorkflowID: wid, Name: "flow", Status: status}
}

// overBatchCluster serves c with its batches, as wend serve --temporal does.
func overBatchCluster(t *testing.T, c *batchCluster) *fixture {
	t.Helper()
	s := server.Over(c)
	s.SetBatches(batch.NewCluster(s, c, t.Logf))
	return serve(t, s)
}

// TestClusterBatchesRunWhatTheClusterCan: batches over a cluster carry out cancel, terminate
// and signal, not retry or purge (which the UI therefore does not offer there); a local
// serve's batches carry out all five.
func TestClusterBatchesRunWhatTheClusterCan(t *testing.T) {
	cluster := overBatchCluster(t, newBatchCluster()).srv.Batches()
	local, err := batch.New(server.New(nil, history.NewMemStore()), &batch.MemStore{}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		op             string
		cluster, local bool
	}{
		{api.BatchOpCancel, true, true},
		{api.BatchOpTerminate, true, true},
		{api.BatchOpSignal, true, true},
		{api.BatchOpRetry, false, true},
		{api.BatchOpPurge, false, true},
	} {
		if got := cluster.Runs(tt.op); got != tt.cluster {
			t.Errorf("on a cluster Runs(%s) = %v, want %v", tt.op, got, tt.cluster)
		}
		if got := local.Runs(tt.op); got != tt.local {
			t.Errorf("locally Runs(%s) = %v, want %v", tt.op, got, tt.local)
		}
	}
}

// TestClusterBatchHandsTheRunsOver: on a cluster that runs batches, POST /v1/batches fixes
// the runs (the filter's open matches, or the ids given, resolved) and starts the cluster's
// batch over them; progress, listing and cancelling answer from the cluster, completed with
// the request and the runs skipped when accepted.
func TestClusterBatchHandsTheRunsOver(t *testing.T) {
	runs := []history.Run{
		clusterRunOf("a1", "ra1", history.StatusRunning),
		clusterRunOf("a2", "ra2", history.StatusRunning),
		clusterRunOf("a3", "ra3", history.StatusCompleted),
		clusterRunOf("b1", "rb1", history.StatusRunning),
	}
	tests := []struct {
		name                            string
		body                            string
		acts                            []string
		matched, total, skipped, actsOn int
		skippedBy                       map[string]int
	}{
		{name: "filter", body: `{"id":"f","operation":"cancel","where":"id ^= a","reason":"tidy"}`,
			acts: []string{"ra1", "ra2"}, matched: 3, total: 2, actsOn: 2},
		{name: "ids", body: `{"id":"i","operation":"terminate","run_ids":["a1","ra1","a3","nope","b1"]}`,
			acts: []string{"ra1", "rb1"}, matched: 5, total: 4, skipped: 2, actsOn: 2,
			skippedBy: map[string]int{"finished": 1, "gone": 1}},
		{name: "signal", body: `{"id":"s","operation":"signal","where":"status = running","signal":{"name":"go"}}`,
			acts: []string{"ra1", "ra2", "rb1"}, matched: 3, total: 3, actsOn: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newBatchCluster(runs...)
			f := overBatchCluster(t, c)
			bt := f.postBatch(tt.body, http.StatusCreated)
			if got := c.started[bt.ID]; !slices.Equal(got, tt.acts) {
				t.Fatalf("cluster batch over %v, want %v", got, tt.acts)
			}
			if bt.Matched != tt.matched || bt.Total != tt.total || bt.Skipped != tt.skipped || bt.Next != tt.skipped || !bt.Open() {
				t.Fatalf("accepted %+v, want matched %d total %d skipped %d", bt, tt.matched, tt.total, tt.skipped)
			}
			if fmt.Sprint(bt.SkippedBy) != fmt.Sprint(tt.skippedBy) {
				t.Fatalf("skipped by %v, want %v", bt.SkippedBy, tt.skippedBy)
			}
			if bt.Request.Where == "" && bt.Request.RunsDigest == "" {
				t.Fatalf("the request lost its filter or ids: %+v", bt.Request)
			}
			c.progress(bt.ID, tt.actsOn)
			done := f.batchClosed(bt.ID)
			if done.Status != api.BatchCompleted || done.Done != tt.actsOn || done.Next != tt.total || done.Request.Where != bt.Request.Where {
				t.Fatalf("closed as %+v", done)
			}
			var list struct{ Batches []api.Batch }
			if code, b := f.do("GET", "/v1/batches", "", &list); code != 200 || len(list.Batches) != 1 || list.Batches[0].ID != bt.ID {
				t.Fatalf("list: %d %s", code, b)
			}
		})
	}
}

// TestClusterBatchCancelStopsIt: cancelling a running batch stops the cluster's; a closed one
// is answered as it is, without a stop.
func TestClusterBatchCancelStopsIt(t *testing.T) {
	c := newBatchCluster(clusterRunOf("a1", "ra1", history.StatusRunning))
	f := overBatchCluster(t, c)
	bt := f.postBatch(`{"id":"c","operation":"cancel","where":"status = running"}`, http.StatusCreated)
	var got api.Batch
	if code, b := f.do("POST", "/v1/batches/c/cancel", "", &got); code != 200 || got.Status != api.BatchCancelled {
		t.Fatalf("cancel: %d %s", code, b)
	}
	if code, b := f.do("POST", "/v1/batches/c/cancel", "", &got); code != 200 || got.Status != api.BatchCancelled {
		t.Fatalf("cancel again: %d %s", code, b)
	}
	if !slices.Equal(c.stopped, []string{bt.ID}) {
		t.Fatalf("stopped %v, want once", c.stopped)
	}
}

// TestClusterBatchRefusals: what a cluster's batches cannot do is refused before anything
// starts, naming what to do instead; a resent id answers its batch, or a conflict.
func TestClusterBatchRefusals(t *testing.T) {
	c := newBatchCluster(clusterRunOf("a1", "ra1", history.StatusRunning), clusterRunOf("f1", "rf1", history.StatusFailed))
	f := overBatchCluster(t, c)
	for _, tt := range []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"retry", `{"operation":"retry","where":"status = failed"}`, http.StatusNotImplemented, api.CodeUnsupported, "use wend retry --where FILTER --temporal ADDR"},
		{"purge", `{"operation":"purge","where":"status = completed"}`, http.StatusNotImplemented, api.CodeUnsupported, "retention deletes closed runs"},
		{"bad filter", `{"operation":"cancel","where":"started < someday"}`, http.StatusBadRequest, api.CodeBadRequest, "where"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, b := f.do("POST", "/v1/batches", tt.body, nil)
			wantError(t, code, b, tt.status, tt.code, tt.msg)
		})
	}
	if len(c.started) != 0 {
		t.Fatalf("a refused batch started: %v", c.started)
	}
	first := f.postBatch(`{"id":"x","operation":"cancel","run_ids":["a1"]}`, http.StatusCreated)
	again := f.postBatch(`{"id":"x","operation":"cancel","run_ids":["a1"]}`, http.StatusOK)
	if again.ID != first.ID || len(c.started) != 1 {
		t.Fatalf("resend answered %+v, started %v", again, c.started)
	}
	code, b := f.do("POST", "/v1/batches", `{"id":"x","operation":"terminate","run_ids":["a1"]}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeIDTaken, "exists with another request")
	// A serve started again knows only what the cluster keeps: the operation and the reason.
	g := overBatchCluster(t, c)
	g.postBatch(`{"id":"x","operation":"cancel","where":"status = running"}`, http.StatusOK)
	code, b = g.do("POST", "/v1/batches", `{"id":"x","operation":"terminate","run_ids":["a1"]}`, nil)
	wantError(t, code, b, http.StatusConflict, api.CodeIDTaken, "exists with another request")
	none := f.postBatch(`{"id":"n","operation":"cancel","where":"id ^= zz"}`, http.StatusCreated)
	if none.Status != api.BatchCompleted || none.Total != 0 || len(c.started) != 1 {
		t.Fatalf("an empty batch: %+v, started %v", none, c.started)
	}
	var got api.Batch
	if code, b := f.do("GET", "/v1/batches/n", "", &got); code != 200 || got.Status != api.BatchCompleted {
		t.Fatalf("get the empty batch: %d %s", code, b)
	}
}
