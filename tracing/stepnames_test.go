package tracing

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/testkit/otlptest"
)

const namedWorkflow = `wend: v1
name: named
plugins: {p: ./p}
steps:
  - {id: charge, activity: p.echo, with: 1}
  - {activity: p.echo, with: 2}
  - {id: pause, delay: 10ms}
  - id: each
    for_each: "${{ [1, 2] }}"
    steps: [{id: item, activity: p.echo, with: "${{ item }}"}]
`

// With NameSteps, a step with an id names its spans ("step charge", not "step steps[0]") and
// its step span carries wend.step.id beside wend.step.path (a try span has the path; its
// step id is its parent's); a for_each item's step is
// named by its id too, its path telling the items apart; a step without an id keeps its path.
func TestSpansNamedByStepID(t *testing.T) {
	rcv := otlptest.Start(t)
	exportTo(t, rcv)
	store := history.NewMemStore()
	p, err := FromEnv(context.Background(), os.Getenv, nil)
	if err != nil || p == nil {
		t.Fatalf("FromEnv = %v, %v", p, err)
	}
	p.NameSteps(runview.StartedStepIDs)
	te := openWith(t, store, &acts{}, p)
	start(t, te.e, namedWorkflow, accepted)
	if got := waitClosed(t, te.e); got.Status != history.StatusCompleted {
		t.Fatalf("run %s", got.Status)
	}
	te.close(t)

	var got []string
	for _, s := range rcv.Spans() {
		if !strings.HasPrefix(s.Name, "step ") && !strings.HasPrefix(s.Name, "try ") {
			continue
		}
		got = append(got, s.Name+" id="+otlptest.Attr(s, "wend.step.id")+" path="+otlptest.Attr(s, "wend.step.path"))
	}
	sort.Strings(got)
	want := []string{
		"step charge id=charge path=steps[0]",
		"step item id=item path=steps[3]@0.steps[0]",
		"step item id=item path=steps[3]@1.steps[0]",
		"step pause id=pause path=steps[2]",
		"step steps[1] id= path=steps[1]",
		"try p.echo #1 id= path=steps[0]",
		"try p.echo #1 id= path=steps[1]",
		"try p.echo #1 id= path=steps[3]@0.steps[0]",
		"try p.echo #1 id= path=steps[3]@1.steps[0]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
