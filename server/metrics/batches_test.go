package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestBatchMetrics: /metrics publishes the batches by status, every status present, and the
// runs still to act on, read at each scrape.
func TestBatchMetrics(t *testing.T) {
	m := New("")
	m.SetBatches(func() BatchCounts {
		return BatchCounts{ByStatus: map[string]int{"running": 2, "completed": 5}, Pending: 130}
	})
	hs := httptest.NewServer(m.Handler(history.NewMemStore(), nil))
	defer hs.Close()
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`wend_batches{status="running"} 2`, `wend_batches{status="completed"} 5`,
		`wend_batches{status="failed"} 0`, `wend_batches{status="cancelled"} 0`, `wend_batch_runs_pending 130`} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
