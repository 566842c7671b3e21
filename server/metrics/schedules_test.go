package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/schedule/runner"
)

// TestScheduleMetrics: /metrics publishes each schedule's durable fire counts by result and
// the lag of started fires, once SetSchedules is given them.
func TestScheduleMetrics(t *testing.T) {
	sm := NewScheduleMetrics()
	sm.SetSource(func() []runner.View {
		v := runner.View{}
		v.ID = "nightly"
		v.State.Counts = schedule.Counts{Started: 4, Skipped: 2}
		return []runner.View{v}
	})
	sm.Observe("nightly", 300*time.Millisecond)
	m := New("")
	m.SetSchedules(sm)
	hs := httptest.NewServer(m.Handler(history.NewMemStore(), nil))
	defer hs.Close()
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`wend_schedule_fires_total{result="started",schedule="nightly"} 4`,
		`wend_schedule_fires_total{result="skipped",schedule="nightly"} 2`,
		`wend_schedule_fires_total{result="missed",schedule="nightly"} 0`,
		`wend_schedule_lag_seconds_count{schedule="nightly"} 1`} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
