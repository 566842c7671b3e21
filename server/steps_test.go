package server

import (
	"testing"
)

const loopSpec = `wend: v1
name: loop
plugins: {demo: ./demo}
steps:
  - id: each
    for_each: [1, 2]
    steps:
      - id: hello
        activity: demo.echo
        with: {n: "${{ item }}"}
  - id: approve
    wait_for_signal: approve
  - id: never
    activity: demo.echo
`

// TestStepTree: a for_each's instances fold into its body step, a composite takes its
// children's status, a signal wait with no event yet shows as waiting, an unreached step as
// none; a failed step is failed with its message.
func TestStepTree(t *testing.T) {
	f := newWebFixture(t)
	f.start("l1", loopSpec)
	d := f.settle("l1", waitingForSignal)
	got := map[string]StepRow{}
	for _, r := range StepTree(d.Events, true) {
		got[r.Path] = r
	}
	for path, want := range map[string]struct {
		status    string
		depth     int
		instances int
	}{
		"steps[0]":          {StepCompleted, 0, 0},
		"steps[0].steps[0]": {StepCompleted, 1, 2},
		"steps[1]":          {StepWaiting, 0, 0},
		"steps[2]":          {StepNone, 0, 0},
	} {
		r, ok := got[path]
		if !ok {
			t.Errorf("no row %s in %v", path, got)
			continue
		}
		if r.Status != want.status || r.Depth != want.depth || r.Instances != want.instances {
			t.Errorf("%s: status %s depth %d instances %d, want %+v", path, r.Status, r.Depth, r.Instances, want)
		}
	}
	if r := got["steps[0]"]; r.Start.IsZero() || r.End.Before(r.Start) || r.Duration() < 0 {
		t.Errorf("loop timing %v..%v", r.Start, r.End)
	}
	if r := got["steps[1]"]; !r.End.IsZero() {
		t.Errorf("a waiting step has an end: %v", r.End)
	}

	f.start("f1", webFailSpec)
	d = f.settle("f1", closed)
	rows := StepTree(d.Events, false)
	if len(rows) != 1 || rows[0].Status != StepFailed || rows[0].Error != "card <b>declined</b>" || rows[0].End.IsZero() {
		t.Errorf("failed step: %+v", rows)
	}
	if StepTree(nil, false) != nil || StepTree(d.Events[1:], false) != nil {
		t.Errorf("a history without WorkflowStarted must give no tree")
	}
}
