package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// waitFor polls cond until it holds, failing the test after a generous bound (a loaded CI
// machine is slow; the bound only stops a hung test).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Tries over MaxActivities wait for a slot before their try starts: no call is made for them,
// they are counted as waiting, and once slots free each runs as its first attempt.
func TestMaxActivitiesWaitingCalls(t *testing.T) {
	for _, tc := range []struct{ slots, runs int }{{1, 3}, {2, 5}} {
		t.Run(fmt.Sprintf("%d slots %d runs", tc.slots, tc.runs), func(t *testing.T) {
			h := newHarness(t)
			h.e.Close()
			h.slots = tc.slots
			h.open()
			release := make(chan struct{})
			h.acts.fns["gate"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
				select {
				case <-release:
					return json.RawMessage(`"ok"`), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			f := h.write("w.wend.yaml", head+"steps: [{id: g, activity: p.gate, timeout: 1m}]\noutput: \"${{ steps.g.output }}\"\n")
			for i := range tc.runs {
				h.start(f, fmt.Sprint("w", i), "null")
			}
			want := CallStats{Max: tc.slots, Running: tc.slots, WaitingSlot: tc.runs - tc.slots}
			waitFor(t, fmt.Sprintf("call stats %+v", want), func() bool { return h.e.CallStats() == want })
			if n := h.acts.count("gate"); n != tc.slots {
				t.Fatalf("%d calls made, want %d: a waiting try must not start", n, tc.slots)
			}
			close(release)
			for i := range tc.runs {
				r := h.wait(fmt.Sprint("w", i))
				if r.Status != history.StatusCompleted {
					t.Fatalf("run %d: %s", i, r.Status)
				}
				evs, _ := h.store.Events(r.RunID, 0)
				for _, ev := range evs {
					if ev.Type == history.ActivityCompleted && ev.Attempt != 1 {
						t.Fatalf("run %d completed on attempt %d: waiting must not count as a try", i, ev.Attempt)
					}
				}
			}
			if got := h.e.CallStats(); got != (CallStats{Max: tc.slots}) {
				t.Fatalf("call stats after the runs %+v", got)
			}
		})
	}
}

func TestDefaultMaxActivities(t *testing.T) {
	h := newHarness(t)
	if got := h.e.CallStats().Max; got != DefaultMaxActivities {
		t.Fatalf("Max %d, want %d", got, DefaultMaxActivities)
	}
}
