package web

import (
	"strings"
	"testing"
)

const nestedSpec = `wend: v1
name: nested
plugins: {demo: ./demo}
steps:
  - id: ship
    parallel:
      - activity: demo.echo
      - steps: [{activity: demo.echo}, {activity: demo.echo}]
  - id: pack
    for_each: [1, 2]
    steps: [{activity: demo.echo}]
`

// TestUIRunNamesSteps: the run page named nested steps by position
// (steps[0].parallel[1].steps[1], steps[1]@0.steps[0]); it shows ids and places, and keeps
// the path for machines in attributes.
func TestUIRunNamesSteps(t *testing.T) {
	f := newWebFixture(t)
	f.start("n1", nestedSpec)
	f.settle("n1", closed)
	code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/n1", Session: true})
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, body)
	}
	for _, want := range []string{
		`data-path="steps[0].parallel[1].steps[1]"`,                       // step tree row, for machines
		`title="steps[0].parallel[1].steps[1]">ship › branch 2 › step 2<`, // its name
		`title="steps[1]@1.steps[0]">pack[1] › step 1<`,                   // timeline and activities
		`>pack<`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, lack := range []string{`>steps[0].parallel[1].steps[1]<`, `>steps[1]@0.steps[0]<`} {
		if strings.Contains(body, lack) {
			t.Errorf("page shows the path %q", lack)
		}
	}
}
