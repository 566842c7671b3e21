//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// api calls a serve's HTTP API with its token.
type api struct {
	t           *testing.T
	base, token string
}

// call sends a request and wants status want; out, when not nil, receives the JSON answer.
func (a api) call(method, path, body string, want int, out any) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s: %d %s; want %d", method, path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: not JSON: %s", method, path, b)
		}
	}
}

// batchView is the part of a wend batch the test reads.
type batchView struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Matched int    `json:"matched"`
	Total   int    `json:"total"`
	Next    int    `json:"next"`
	Done    int    `json:"done"`
	Failed  int    `json:"failed"`
	Request struct {
		Operation string `json:"operation"`
		Where     string `json:"where"`
	} `json:"request"`
}

// TestBatchOnTemporal: POST /v1/batches on wend serve --temporal cancels the open runs its
// filter matches through Temporal's batch operation, and GET /v1/batches/{id} follows its
// progress to completion; the run the filter leaves out stays running, a retry batch is
// refused, a signal batch delivers wend's signal, and a batch goes on while serve is killed.
func TestBatchOnTemporal(t *testing.T) {
	const queue = "batch-e2e"
	w := startWorker(t, queue, filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	flows := t.TempDir()
	if err := os.WriteFile(filepath.Join(flows, "contract.wend.yaml"), []byte(contractFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	addr := freeAddr(t)
	srv := startProcEnv(t, "wend: serving the runs of Temporal", []string{"WEND_TOKEN=" + token},
		env.wendTemporal, "serve", "--temporal", env.addr, "--task-queue", queue, "--http", addr, "--workflows", flows)
	defer srv.stop(t)
	a := api{t: t, base: "http://" + addr, token: token}

	ids := []string{"bulk-e2e-1", "bulk-e2e-2", "bulk-e2e-3", "keep-e2e-1", "sig-e2e-1", "sig-e2e-2", "dur-e2e-1", "dur-e2e-2", "dur-e2e-3"}
	for _, id := range ids {
		a.call("POST", "/v1/runs", fmt.Sprintf(`{"workflow": "contract", "id": %q}`, id), http.StatusCreated, nil)
	}
	// The filter is resolved through visibility, which shows a started run a moment later.
	waitFor(t, "the runs listed as running", func() bool {
		var page struct {
			Runs []struct {
				WorkflowID string `json:"workflow_id"`
			}
		}
		a.call("GET", "/v1/runs?status=running&limit=1000", "", 200, &page)
		n := 0
		for _, r := range page.Runs {
			if slices.Contains(ids, r.WorkflowID) {
				n++
			}
		}
		return n == len(ids)
	})

	a.call("POST", "/v1/batches", `{"operation": "retry", "where": "id ^= bulk-e2e-"}`, http.StatusNotImplemented, nil)
	var bt batchView
	a.call("POST", "/v1/batches", `{"id": "batch-e2e-cancel", "operation": "cancel", "where": "id ^= bulk-e2e-", "reason": "bulk"}`, http.StatusCreated, &bt)
	if bt.ID != "batch-e2e-cancel" || bt.Matched != 3 || bt.Total != 3 || bt.Request.Operation != "cancel" {
		t.Fatalf("accepted %+v, want 3 runs to cancel", bt)
	}
	seen := map[string]bool{}
	waitFor(t, "the batch completed", func() bool {
		a.call("GET", "/v1/batches/batch-e2e-cancel", "", 200, &bt)
		seen[bt.Status] = true
		return bt.Status != "running"
	})
	if bt.Status != "completed" || bt.Done != 3 || bt.Failed != 0 || bt.Next != 3 || bt.Request.Where != "id ^= bulk-e2e-" {
		t.Fatalf("batch closed as %+v, want completed with 3 done", bt)
	}
	for _, id := range ids[:3] {
		var o struct {
			Run struct{ Status string } `json:"run"`
		}
		a.call("GET", "/v1/runs/"+id+"/wait?timeout=60s", "", 200, &o)
		if o.Run.Status != "cancelled" {
			t.Errorf("%s is %s after the batch, want cancelled", id, o.Run.Status)
		}
	}
	var kept struct {
		Run struct{ Status string } `json:"run"`
	}
	a.call("GET", "/v1/runs/keep-e2e-1", "", 200, &kept)
	if kept.Run.Status != "running" {
		t.Errorf("keep-e2e-1, not matched, is %s", kept.Run.Status)
	}
	var list struct{ Batches []batchView }
	a.call("GET", "/v1/batches", "", 200, &list)
	if len(list.Batches) == 0 || list.Batches[0].ID != "batch-e2e-cancel" {
		t.Fatalf("GET /v1/batches: %+v", list.Batches)
	}
	// A signal batch (after the cancel one: a namespace runs one at a time) delivers the wend
	// signal with the batch's idempotency id, which the runs' workflow takes.
	a.call("POST", "/v1/batches", `{"id": "batch-e2e-signal", "operation": "signal", "where": "id ^= sig-e2e-", "signal": {"name": "approve", "data": {"by": "ann"}}}`, http.StatusCreated, &bt)
	waitFor(t, "the signal batch completed", func() bool {
		a.call("GET", "/v1/batches/batch-e2e-signal", "", 200, &bt)
		return bt.Status != "running"
	})
	if bt.Status != "completed" || bt.Done != 2 || bt.Total != 2 {
		t.Fatalf("signal batch closed as %+v, want completed with 2 done", bt)
	}
	for _, id := range []string{"sig-e2e-1", "sig-e2e-2"} {
		waitFor(t, id+" recorded the batch's signal", func() bool {
			var page struct {
				Events []struct {
					Type string          `json:"type"`
					Data json.RawMessage `json:"data"`
				} `json:"events"`
			}
			a.call("GET", "/v1/runs/"+id+"/events", "", 200, &page)
			for _, ev := range page.Events {
				if ev.Type == "SignalReceived" && strings.Contains(string(ev.Data), `"signal_id":"batch:batch-e2e-signal"`) &&
					strings.Contains(string(ev.Data), `"by":"ann"`) {
					return true
				}
			}
			return false
		})
		a.call("POST", "/v1/runs/"+id+"/cancel", `{}`, 200, nil)
	}

	// The cluster keeps the batch: serve killed just after accepting a slow one, the batch
	// goes on, and a serve started again follows it to its end.
	a.call("POST", "/v1/batches", `{"id": "batch-e2e-durable", "operation": "terminate", "where": "id ^= dur-e2e-", "rps": 1}`, http.StatusCreated, &bt)
	srv.kill()
	if bt.Status != "running" || bt.Total != 3 {
		t.Fatalf("accepted %+v, want 3 runs to terminate, running", bt)
	}
	addr2 := freeAddr(t)
	srv2 := startProcEnv(t, "wend: serving the runs of Temporal", []string{"WEND_TOKEN=" + token},
		env.wendTemporal, "serve", "--temporal", env.addr, "--task-queue", queue, "--http", addr2, "--workflows", flows)
	defer srv2.stop(t)
	a.base = "http://" + addr2
	waitFor(t, "the batch started before the kill completed", func() bool {
		a.call("GET", "/v1/batches/batch-e2e-durable", "", 200, &bt)
		return bt.Status != "running"
	})
	if bt.Status != "completed" || bt.Done != 3 || bt.Total != 3 || bt.Request.Operation != "terminate" {
		t.Fatalf("batch after serve's restart closed as %+v, want completed with 3 done", bt)
	}
	for _, id := range []string{"dur-e2e-1", "dur-e2e-2", "dur-e2e-3"} {
		var d struct {
			Run struct{ Status string } `json:"run"`
		}
		a.call("GET", "/v1/runs/"+id, "", 200, &d)
		if d.Run.Status == "running" {
			t.Errorf("%s is still running after the terminate batch", id)
		}
	}

	// wend batch reads the cluster's batch operations with --temporal.
	r := cli(t, time.Minute, env.wendTemporal, "batch", "show", "batch-e2e-cancel", "--temporal", env.addr)
	if r.code != 0 || !strings.Contains(r.stdout, "completed") || !strings.Contains(r.stdout, "cancel") {
		t.Errorf("wend batch show --temporal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	a.call("POST", "/v1/runs/keep-e2e-1/cancel", `{}`, 200, nil)
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
