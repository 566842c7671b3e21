package web

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/spec/graph"
)

// graphSVG draws w with marks as an inline SVG for a page, coloured by the page's stylesheet
// (its arrow's id, g-arrow, is named there). spec/graph writes every text and
// attribute through its XML escaper, so step ids, expressions and mark texts stay text: the
// drawing is the one piece of markup a page takes whole (template.HTML).
func graphSVG(w *spec.Workflow, marks map[string]graph.Mark) template.HTML {
	if w == nil {
		return ""
	}
	ids := w.StepIDs()
	name := func(path string) string { return runview.StepName(path, ids) }
	var b bytes.Buffer
	if err := graph.SVGWith(&b, graph.Build(w), graph.Options{Marks: marks, IDPrefix: "g-", Class: "graph", Name: name, Styled: true}); err != nil {
		return ""
	}
	return template.HTML(b.String()) // every text in it is escaped by spec/graph
}

// runGraph is the run's drawing: its workflow with each step's state (stepMarks), each box
// linking to the step's detail on this page.
func (v *runView) runGraph(view *runview.View, events []history.Event) template.HTML {
	loops := loopItems(events, caughtSeqs(view), v.Waits)
	marks := stepMarks(v.Steps, v.Waits, loops, func(path string) string { return v.With("step", path) + "#step-detail" })
	return graphSVG(view.Spec(), marks)
}

// stepDetail is what a click on a step's box shows: its row of the step tree, its state, what
// it waits for now, and its activities (tries, input, output) as the timeline's cards, a page
// at a time (a loop's step has one per item).
type stepDetail struct {
	runview.Step
	State, Text string
	Waits       []runview.Wait
	Activities  []runview.Activity
	N           int // activities in all
	Page, Pages int
}

// detailOf finds the step path names among the rows; nil when it names none.
func (v *runView) detailOf(path string, page int) *stepDetail {
	if path == "" {
		return nil
	}
	for _, s := range v.Steps {
		if s.Path != path {
			continue
		}
		d := &stepDetail{Step: s}
		d.State, d.Text = drawState(s)
		for _, w := range v.Waits {
			if under(runview.StaticPath(w.Step), path) {
				d.Waits = append(d.Waits, w)
			}
		}
		var idx []int
		for i, a := range v.Doc.Activities {
			if under(runview.StaticPath(a.Step), path) {
				idx = append(idx, i)
			}
		}
		d.N = len(idx)
		d.Pages = max(1, (d.N+groupPageSize-1)/groupPageSize)
		d.Page = min(max(page, 1), d.Pages)
		lo := (d.Page - 1) * groupPageSize
		for _, i := range idx[min(lo, len(idx)):min(lo+groupPageSize, len(idx))] {
			d.Activities = append(d.Activities, v.Doc.Activities[i])
		}
		return d
	}
	return nil
}

// under reports whether the static step path p is step or inside it.
func under(p, step string) bool {
	return p == step || strings.HasPrefix(p, step+".")
}

// Legend lists the drawing's states, each shown as its colour and its word.
func (v *runView) Legend() []string {
	return []string{drawNone, drawRunning, drawWaiting, drawCompleted, drawFailed, drawCaught, drawCompensated, drawCancelled}
}

// DetailPage is the link to page n of the detail's activities.
func (v *runView) DetailPage(n int) string { return v.With("spage", strconv.Itoa(n)) + "#step-detail" }

// WaitText phrases a wait for the detail (runview.WaitText).
func (v *runView) WaitText(w runview.Wait) string { return runview.WaitText(w, v.StepName) }
