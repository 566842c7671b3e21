package commands

import (
	"testing"
	"time"

	"github.com/wendflow/wend/runview"
)

// TestResumeAnnouncesWaits: what resume prints at start for each wait of an open
// run, so a run whose next event is hours off does not look hung.
func TestResumeAnnouncesWaits(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		w    runview.Wait
		want string
	}{
		{runview.Wait{Kind: runview.WaitSignal, Signal: "shipped"}, "signal shipped"},
		{runview.Wait{Kind: runview.WaitTimer, Purpose: "run_timeout", Until: now.Add(2*time.Hour - 30*time.Second)}, "run timeout in 1h59m"},
		{runview.Wait{Kind: runview.WaitTimer, Purpose: "delay", Until: now.Add(45*time.Second + 300*time.Millisecond)}, "delay in 45s"},
		{runview.Wait{Kind: runview.WaitTimer, Purpose: "timeout", Until: now.Add(-time.Second)}, "timeout due now"},
		{runview.Wait{Kind: runview.WaitActivity, Activity: "demo.charge", Attempt: 2, Until: now.Add(90 * time.Second)}, "activity demo.charge (attempt 2) in 1m"},
		{runview.Wait{Kind: runview.WaitActivity, Activity: "demo.charge", Attempt: 1}, "activity demo.charge (attempt 1)"},
		{runview.Wait{Kind: runview.WaitChild, WorkflowID: "order-7/steps[0]"}, "child workflow order-7/steps[0]"},
	} {
		if got := waitsFor(tc.w, now, nil); got != tc.want {
			t.Errorf("waitsFor(%+v) = %q, want %q", tc.w, got, tc.want)
		}
	}
}
