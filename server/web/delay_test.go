package web

import (
	"strings"
	"testing"
)

// TestUIFiredDelayCompleted: on the run page of a completed run, a fired delay and the
// parallel around it read completed, not waiting (the engine's TimerFired now names its step).
func TestUIFiredDelayCompleted(t *testing.T) {
	f := newWebFixture(t)
	f.start("d1", "wend: v1\nname: d\nsteps:\n  - id: both\n    parallel: [{id: pause, delay: 20ms}, {id: pause2, delay: 30ms}]\n")
	f.settle("d1", closed)
	code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/d1", Session: true})
	if code != 200 {
		t.Fatalf("run page: %d", code)
	}
	for _, want := range []string{
		`data-path="steps[0]" data-status="completed"`,
		`data-path="steps[0].parallel[0]" data-status="completed"`,
		`data-path="steps[0].parallel[1]" data-status="completed"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %s", want)
		}
	}
	if strings.Contains(body, `data-status="waiting"`) {
		t.Error("a step of the completed run reads waiting")
	}
}
