package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// fakeServe answers POST /v1/runs and the wait route as wend serve does: the first wait is a
// long poll that ends with the run still open, the second gives the outcome.
func fakeServe(t *testing.T, status string, started bool) *Client {
	t.Helper()
	waits := 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req["id"] != "r1" || req["workflow"] != "seq" {
			http.Error(w, fmt.Sprintf("bad start request %v %v", req, err), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(api.Started{Run: history.Run{RunID: "x", Status: history.StatusRunning}, Started: started})
	})
	mux.HandleFunc("GET /v1/runs/r1/wait", func(w http.ResponseWriter, r *http.Request) {
		waits++
		json.NewEncoder(w).Encode(api.Outcome{Run: history.Run{RunID: "x", Status: status}, Closed: waits > 1})
	})
	return overTest(t, mux)
}

// overTest is a client of h served by a test server.
func overTest(t *testing.T, h http.Handler) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return New(&http.Client{Transport: rewrite{srv.URL}})
}

// rewrite sends the client's http://wend requests to the test server.
type rewrite struct{ base string }

func (rw rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	u, _ := r2.URL.Parse(rw.base + r.URL.RequestURI())
	r2.URL, r2.Host = u, ""
	return http.DefaultTransport.RoundTrip(r2)
}

func TestRunToEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  string
		started bool
		err     string
	}{
		{"completed after a poll that timed out", history.StatusCompleted, true, ""},
		{"failed", history.StatusFailed, true, "run r1 ended failed"},
		{"id taken", history.StatusCompleted, false, "start r1: not started (id taken)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fakeServe(t, tc.status, tc.started).RunToEnd(context.Background(), "r1", "seq", nil)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}

// An answer that is not the API's JSON error still comes back as a *api.Error with its
// status; one that is keeps its code and message.
func TestDoReturnsTheServersError(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/runs/gone", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error": {"code": "not_found", "message": "no run gone"}}`))
	})
	c := overTest(t, mux)
	for _, tc := range []struct {
		path, code, msg string
		status          int
	}{
		{"/v1/runs/gone", "not_found", "no run gone", http.StatusNotFound},
		{"/v1/nosuch", api.CodeInternal, "server answered 404 Not Found", http.StatusNotFound},
	} {
		t.Run(tc.path, func(t *testing.T) {
			err := c.Do(context.Background(), "GET", tc.path, nil, nil)
			var se *api.Error
			if !errors.As(err, &se) || se.Code != tc.code || se.Message != tc.msg || se.Status != tc.status {
				t.Fatalf("err %#v, want %s %q (%d)", err, tc.code, tc.msg, tc.status)
			}
		})
	}
}

func TestReady(t *testing.T) {
	registered, engine := 0, false
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"status": "ok", "engine": engine, "pid": 7})
	})
	mux.HandleFunc("GET /v1/workflows", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"workflows": make([]api.Workflow, registered)})
	})
	c := overTest(t, mux)
	ctx := context.Background()
	if err := c.Ready(ctx, 0); err == nil || !strings.Contains(err.Error(), "Engine:false") {
		t.Fatalf("without an engine: %v", err)
	}
	engine = true
	if err := c.Ready(ctx, 0); err != nil {
		t.Fatalf("health alone: %v", err)
	}
	if err := c.Ready(ctx, 3); err == nil || err.Error() != "0 workflows registered, want 3" {
		t.Fatalf("before the workflows are registered: %v", err)
	}
	registered = 3
	if err := c.Ready(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if h, err := c.Health(ctx); err != nil || h.PID != 7 {
		t.Fatalf("health %+v %v", h, err)
	}
}
