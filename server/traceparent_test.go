package server

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// TestStartTakesTheTraceparentHeader: POST /v1/runs records the W3C traceparent header in
// the run's WorkflowStarted; a malformed one is refused as bad input, naming the format.
func TestStartTakesTheTraceparentHeader(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name, header string
		status       int
	}{
		{"valid", tp, http.StatusCreated},
		{"malformed", "00-nope", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := history.NewMemStore()
			f := newFixture(t, store)
			body, _ := json.Marshal(engine.StartRequest{WorkflowID: "w", SpecFile: filepath.Join(f.dir, "a.wend.yaml"),
				Source: waitSpec, Input: json.RawMessage(`{"who":"ann"}`)})
			req, _ := http.NewRequest("POST", f.hs.URL+"/v1/runs", strings.NewReader(string(body)))
			req.Header.Set("traceparent", tt.header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.status != http.StatusCreated {
				if !strings.Contains(string(b), "traceparent") {
					t.Fatalf("refusal %s does not name the traceparent", b)
				}
				return
			}
			var st api.Started
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			evs, _ := store.Events(st.Run.RunID, 0)
			started, _ := history.DataOf[history.Started](evs[0])
			if started.TraceParent != tp {
				t.Fatalf("WorkflowStarted.TraceParent = %q, want the header's %q", started.TraceParent, tp)
			}
		})
	}
}
