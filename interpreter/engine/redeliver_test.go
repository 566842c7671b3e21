package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestRetryDueWhileDownIsNotARedelivery: a try whose backoff had not ended when wend stopped
// was never delivered; after a restart before it is due it runs under its own attempt, and no
// interruption is recorded (docs/reliability.md: only a try known to have been delivered may
// be recorded as interrupted).
func TestRetryDueWhileDownIsNotARedelivery(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["flaky"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if c.Attempt == 1 {
			return nil, &history.ActivityError{Type: "Busy", Message: "later"}
		}
		return json.RawMessage(`"ok"`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{id: s, activity: p.flaky, retry: {tries: 2, backoff: [1h]}}]\n")
	r := h.start(f, "w", "null")
	for !h.hasEvent(r.RunID, history.ActivityRetryScheduled) {
		time.Sleep(time.Millisecond)
	}
	h.e.Close()
	h.open()
	if _, err := h.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	r = h.wait("w")
	if r.Status != history.StatusCompleted || h.acts.count("flaky") != 2 {
		t.Fatalf("%s after %d calls", r.Status, h.acts.count("flaky"))
	}
	if n := count(events(h, r), history.ActivityAttemptInterrupted); n != 0 {
		t.Fatalf("%d interruptions recorded for a try that was not due", n)
	}
}
