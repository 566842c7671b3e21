package interpreter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
)

// TestTimerFiredStep: a TimerFired that names its timer's step is applied, as one from an
// older history that names none is (a sim.Sim fires timers so); one that names another step is
// refused, nothing decided.
func TestTimerFiredStep(t *testing.T) {
	const src = sim.Head + "steps:\n  - delay: 1m\n  - activity: p.echo\n"
	for _, tc := range []struct {
		step string
		err  string
	}{
		{"", ""},
		{"steps[0]", ""},
		{"steps[1]", "names step steps[1], but the timer belongs to step steps[0]"},
	} {
		s := sim.New(t, src, nil)
		s.Now = sim.T0.Add(time.Minute)
		out, err := s.R.Apply(history.Event{Seq: uint64(len(s.Events) + 1), Type: history.TimerFired, Step: tc.step, Time: s.Now,
			Data: history.MustData(history.TimerRef{TimerID: "steps[0]"})})
		switch {
		case tc.err == "" && (err != nil || len(out) != 1 || out[0].Type != history.ActivityScheduled):
			t.Errorf("step %q: decisions %v, err %v; want the next activity", tc.step, out, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || len(out) != 0):
			t.Errorf("step %q: decisions %v, err %v; want %q", tc.step, out, err, tc.err)
		}
	}
}
