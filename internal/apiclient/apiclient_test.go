package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// fakeServe answers POST /v1/runs and the wait route as wend serve does: the first wait is a
// long poll that ends with the run still open, the second gives the outcome.
func fakeServe(t *testing.T, status string, started bool) *Client {
	waits := 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req["id"] != "r1" || req["workflow"] != "seq" {
			http.Error(w, fmt.Sprintf("bad start request %v %v", req, err), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(server.Started{Run: history.Run{RunID: "x", Status: history.StatusRunning}, Started: started})
	})
	mux.HandleFunc("GET /v1/runs/r1/wait", func(w http.ResponseWriter, r *http.Request) {
		waits++
		json.NewEncoder(w).Encode(server.Outcome{Run: history.Run{RunID: "x", Status: status}, Closed: waits > 1})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return With(&http.Client{Transport: rewrite{srv.URL}})
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

func TestCallNamesTheAnswer(t *testing.T) {
	c := fakeServe(t, history.StatusCompleted, true)
	err := c.Call(context.Background(), "GET", "/v1/nosuch", nil, http.StatusOK, nil)
	if err == nil || !strings.Contains(err.Error(), "GET /v1/nosuch: 404 Not Found: 404 page not found") {
		t.Fatalf("err %v", err)
	}
}

func TestReady(t *testing.T) {
	registered := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"status": "ok", "engine": true})
	})
	mux.HandleFunc("GET /v1/workflows", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"workflows": make([]server.Workflow, registered)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := With(&http.Client{Transport: rewrite{srv.URL}})
	if err := c.Ready(context.Background(), 3); err == nil || err.Error() != "0 workflows registered, want 3" {
		t.Fatalf("before the workflows are registered: %v", err)
	}
	registered = 3
	if err := c.Ready(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
}
