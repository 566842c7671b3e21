package interpreter_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// A failure that names the wait before the next try (a server's Retry-After, passed on by the
// plugin) replaces the step's backoff for that retry, unjittered and capped at a week; a
// failure without one keeps the backoff. The tries still count against the step's tries.
func TestPluginChosenRetryWait(t *testing.T) {
	week := interpreter.MaxNextRetryDelay
	for _, tc := range []struct {
		name   string
		delays []int64 // NextRetryDelayMS of the failures of tries 1 and 2
		gaps   []time.Duration
	}{
		{"backoff when none asked", []int64{0, 0}, []time.Duration{5 * time.Second, 30 * time.Second}},
		{"the plugin's wait, shorter", []int64{1500, 0}, []time.Duration{1500 * time.Millisecond, 30 * time.Second}},
		{"the plugin's wait, longer", []int64{0, 120_000}, []time.Duration{5 * time.Second, 2 * time.Minute}},
		{"capped at a week", []int64{1 << 62, 0}, []time.Duration{week, 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sim.New(t, sim.Head+`
steps:
  - activity: p.flaky
    retry: {tries: 3, backoff: [5s, 30s]}
`, nil)
			var at []time.Time
			s.RunActivities(func(_ string, _ any, attempt int) (any, *history.Failure) {
				at = append(at, s.Now)
				f := &history.Failure{Category: history.CategoryActivity, Type: "HTTP503", Message: "unavailable"}
				if attempt <= len(tc.delays) {
					f.NextRetryDelayMS = tc.delays[attempt-1]
				}
				return nil, f
			})
			if len(at) != 3 {
				t.Fatalf("%d tries, want the step's 3", len(at))
			}
			for i, want := range tc.gaps {
				if got := at[i+1].Sub(at[i]); got != want {
					t.Errorf("wait after try %d: %s, want %s", i+1, got, want)
				}
			}
			var recorded []int64
			for _, ev := range s.Events {
				if ev.Type == history.ActivityAttemptFailed {
					af, _ := history.DataOf[history.AttemptFailure](ev)
					recorded = append(recorded, af.Failure.NextRetryDelayMS)
				}
			}
			if want := append(append([]int64(nil), tc.delays...), 0); !reflect.DeepEqual(recorded, want) {
				t.Errorf("recorded delays %v, want %v", recorded, want)
			}
			s.ReplayOK(t)
		})
	}
}
