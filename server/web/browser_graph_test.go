package web

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/testkit/browsertest"
)

// TestBrowserRunGraph: the run page draws the workflow with each step's state as a colour
// and a word, the signal wait highlighted; a click on the loop's box opens its detail with
// its items' tries, and the drawing follows the run when the signal comes.
func TestBrowserRunGraph(t *testing.T) {
	f := newWebFixture(t)
	writeFile(t, filepath.Join(f.dir, "child.wend.yaml"), childSpec)
	f.start("kinds", kindsSpec)
	f.settle("kinds", waitingForSignal)
	ctx := login(t, f)
	browsertest.Do(t, ctx, "open the run",
		chromedp.Navigate(f.base+"/ui/runs/kinds"), chromedp.WaitVisible(chromedp.CSS(`#graph svg.graph`)))

	states := browsertest.Get(t, ctx, "states", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#graph g.node[data-path]')].filter(g => g.getBoundingClientRect().width > 0).map(g => g.dataset.path + "=" + g.dataset.state + ":" + g.querySelector('tspan.state').textContent)`))
	want := []string{"steps[0]=completed:completed", "steps[1]=completed:completed", "steps[1].parallel[0]=completed:completed",
		"steps[1].parallel[1]=completed:completed", "steps[2]=completed:completed", "steps[2].steps[0]=completed:completed",
		"steps[3]=caught:caught", "steps[3].catch[0]=completed:completed", "steps[4]=completed:completed",
		"steps[5]=waiting:waiting", "steps[6]=none:not reached"}
	if strings.Join(states, " ") != strings.Join(want, " ") {
		t.Errorf("drawn states\n%v\nwant\n%v", states, want)
	}
	browsertest.Text(t, ctx, `#graph g.node[data-path="steps[2]"] text:last-of-type`, "3 items: 3 completed")
	if cur := browsertest.Get(t, ctx, "current", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#graph g.node.current')].map(g => g.dataset.path)`)); strings.Join(cur, " ") != "steps[5]" {
		t.Errorf("highlighted %v, want the signal wait steps[5]", cur)
	}
	// Colour follows the state (and the word says it too).
	fills := browsertest.Get(t, ctx, "fills", chromedp.Evaluate[[]string](
		`["steps[0]","steps[3]","steps[5]","steps[6]"].map(p => getComputedStyle(document.querySelector('#graph g.node[data-path="'+p+'"] rect')).fill)`))
	seen := map[string]bool{}
	for _, c := range fills {
		seen[c] = true
	}
	if len(seen) != 4 {
		t.Errorf("completed, caught, waiting and not reached share colours: %v", fills)
	}

	browsertest.Do(t, ctx, "click the loop",
		chromedp.Click(chromedp.CSS(`#graph g.node[data-path="steps[2]"] rect`)), chromedp.WaitVisible(chromedp.CSS(`#step-detail`)))
	browsertest.Text(t, ctx, `#detail-state`, "completed")
	until(t, ctx, "the loop's three cards", `document.querySelectorAll('#step-detail .card.activity').length === 3`)
	browsertest.Text(t, ctx, `#step-detail .card.activity .tries`, "tries 1 of 1")

	// A signal nobody waits for moves the run on and no step's state: the page takes the new
	// live part and keeps the drawing it has (the same element, marked here).
	version := browsertest.Get(t, ctx, "version", chromedp.Evaluate[string](`document.querySelector('#run-live').dataset.version`))
	browsertest.Get(t, ctx, "mark the drawing", chromedp.Evaluate[bool](`document.querySelector('#graph svg').classList.add('seen-before') === undefined`))
	if _, err := f.srv.Signal(t.Context(), "kinds", "later", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the live part follows the run", `document.querySelector('#run-live').dataset.version !== `+browsertest.JSString(version))
	if kept := browsertest.Get(t, ctx, "kept", chromedp.Evaluate[bool](`document.querySelector('#graph svg.seen-before') !== null && document.querySelector('#graph[data-kept]') === null`)); !kept {
		t.Error("the page drew its unchanged drawing again, or kept an empty box")
	}

	if _, err := f.srv.Signal(t.Context(), "kinds", "approve", []byte(`{"by":"ann"}`)); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the drawing follows the run", `document.querySelector('#run-status').textContent === 'completed' && document.querySelector('#graph g.node[data-path="steps[6]"]').dataset.state === 'completed' && document.querySelector('#graph svg.seen-before') === null`)
}
