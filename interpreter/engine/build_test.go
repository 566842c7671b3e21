package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wendflow/wend/history"
)

// buildActs is fakeActs behind the BuildActivities port, naming build for every try.
type buildActs struct {
	*fakeActs
	build string
}

func (b buildActs) ExecuteBuild(ctx context.Context, c history.ActivityCall, hb func(history.Heartbeat), served func(string)) (json.RawMessage, error) {
	served(b.build)
	return b.Execute(ctx, c, hb)
}

// Each try's outcome records the plugin build that served it — completed, failed, and timed out
// by the engine's own timer while the call still ran — when the Activities names builds; an
// Activities that does not leaves the field out, as histories written before it have none.
func TestOutcomeRecordsPluginBuild(t *testing.T) {
	const sha = "9f2c6d0e4b1a8c7d5e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d"
	for _, tc := range []struct {
		name  string
		named bool
	}{{"BuildActivities", true}, {"Activities", false}} {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, store: history.NewMemStore(), clock: NewFakeClock(t0), dir: t.TempDir(),
				acts: &fakeActs{fns: map[string]func(context.Context, history.ActivityCall) (json.RawMessage, error){}}}
			var acts Activities = h.acts
			if tc.named {
				acts = buildActs{h.acts, sha}
			}
			h.e = New(Options{Store: h.store, Activities: acts, Clock: h.clock, Logf: t.Logf})
			t.Cleanup(func() { h.e.Close() })
			h.acts.fns["flaky"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
				if c.Attempt == 1 {
					return nil, &history.ActivityError{Type: "Down", Message: "try again"}
				}
				return json.RawMessage(`1`), nil
			}
			h.acts.fns["hang"] = func(ctx context.Context, _ history.ActivityCall) (json.RawMessage, error) {
				<-ctx.Done()
				return nil, errors.New("stopped")
			}
			f := h.write("w.wend.yaml", head+`steps:
  - {id: flaky, activity: p.flaky, retry: {tries: 2, backoff: [1s]}}
  - {id: slow, activity: p.hang, timeout: 10s, retry: {tries: 1}}
`)
			r := h.wait(h.start(f, "w", `{}`).WorkflowID)
			if r.Status != history.StatusFailed {
				t.Fatalf("status %s, want failed (the slow step times out)", r.Status)
			}
			evs, err := h.store.Events(r.RunID, 0)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[history.EventType]int{}
			for _, ev := range evs {
				var got string
				switch ev.Type {
				case history.ActivityCompleted:
					d, _ := history.DataOf[history.ActivityResult](ev)
					got = d.PluginSHA256
				case history.ActivityAttemptFailed, history.ActivityTimedOut:
					d, _ := history.DataOf[history.AttemptFailure](ev)
					got = d.PluginSHA256
				default:
					continue
				}
				seen[ev.Type]++
				want := ""
				if tc.named {
					want = sha
				}
				if got != want {
					t.Errorf("%s (seq %d) plugin_sha256 %q, want %q", ev.Type, ev.Seq, got, want)
				}
			}
			if seen[history.ActivityCompleted] != 1 || seen[history.ActivityAttemptFailed] != 1 || seen[history.ActivityTimedOut] != 1 {
				t.Fatalf("outcomes %v, want one completed, one failed try, one timed out", seen)
			}
		})
	}
}
