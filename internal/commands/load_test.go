package commands

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The load test's bounds: it stops at loadRequests or after loadFor, whichever comes first.
const (
	loadRuns     = 50
	loadClients  = 8
	loadRequests = 4000
	loadFor      = 3 * time.Second
	// loadFloor is the slowest rate the test accepts. It is far below what a laptop does (see
	// the README) so a busy CI machine passes, yet it fails a page that scans or blocks.
	loadFloor = 20.0
)

const e2eBusy = `wend: v1
name: busy
plugins: {demo: ./demo}
steps:
  - id: work
    activity: demo.sleep
    with: {ms: 2000}
  - id: pause
    delay: 1s
  - id: more
    activity: demo.sleep
    with: {ms: 1000}
`

// TestLoadPages measures how fast a real wend serve answers the runs list and a run's page
// over loopback while 50 runs execute (activities heartbeating, timers, commits), and that
// every answer is a 200.
func TestLoadPages(t *testing.T) {
	s := startServe(t, map[string]string{"busy.wend.yaml": e2eBusy})
	ids := make([]string, loadRuns)
	for i := range ids {
		ids[i] = fmt.Sprintf("busy-%02d", i)
		s.start(ids[i], "busy.wend.yaml", "")
	}
	var d struct {
		Runs []struct{ Status string } `json:"runs"`
	}
	s.api("GET", "/v1/runs?status=running", nil, &d)
	if len(d.Runs) != loadRuns {
		t.Fatalf("%d runs running before the load, want %d", len(d.Runs), loadRuns)
	}

	var sent, bad atomic.Int64
	var firstErr atomic.Value
	paths := func(i int64) string {
		if i%2 == 0 {
			return "/ui/runs"
		}
		return "/ui/runs/" + ids[int(i/2)%loadRuns]
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}, Timeout: 10 * time.Second}
	start := time.Now()
	deadline := start.Add(loadFor)
	var wg sync.WaitGroup
	for range loadClients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				n := sent.Add(1)
				if n > loadRequests {
					return
				}
				req, _ := http.NewRequest("GET", s.base+paths(n), nil)
				req.Header.Set("Authorization", "Bearer "+e2eReadToken) // the pages need a token, on loopback too
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("GET %s: %s", paths(n), resp.Status)
					}
				}
				if err != nil {
					bad.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	done := min(sent.Load(), loadRequests)
	rate := float64(done) / elapsed.Seconds()
	s.api("GET", "/v1/runs?status=running", nil, &d)
	still := len(d.Runs)
	t.Logf("load: %d pages (list and run, alternating) in %s with %d clients = %.0f pages/s; %d of %d runs still running at the end",
		done, elapsed.Round(time.Millisecond), loadClients, rate, still, loadRuns)
	if bad.Load() > 0 {
		t.Errorf("%d failed requests; first: %v", bad.Load(), firstErr.Load())
	}
	if rate < loadFloor {
		t.Errorf("%.1f pages/s, want at least %.0f", rate, loadFloor)
	}
	if still == 0 {
		t.Errorf("no run was executing at the end of the measurement: it did not measure under load")
	}
	for _, id := range ids {
		s.waitStatus(id, "completed", 30*time.Second)
	}
}
