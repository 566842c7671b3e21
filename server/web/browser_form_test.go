package web

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/testkit/browsertest"
)

// field is the CSS selector of the decide form's field named n.
func field(n, tag string) string {
	return `form[data-signal="decide"] label[data-name="` + n + `"] ` + tag
}

// TestBrowserSignalForm: a signal's form checks in the page first (a too short name, a JSON
// box that is not JSON stop the send), then sends the answer, which the run takes.
func TestBrowserSignalForm(t *testing.T) {
	f := newWebFixture(t)
	f.start("r1", reviewSpec)
	f.settle("r1", waitingForSignal)
	ctx := login(t, f)
	browsertest.Do(t, ctx, "open the run",
		chromedp.Navigate(f.base+"/ui/runs/r1"), chromedp.WaitVisible(chromedp.CSS(`form[data-signal="decide"]`)))
	browsertest.Text(t, ctx, `form[data-signal="decide"] p.help`, "The reviewer's <b>decision</b>")
	browsertest.Text(t, ctx, field("approved", "small.help"), "Approve the order?")

	valid := `document.querySelector('form[data-signal="decide"]').checkValidity()`
	browsertest.Do(t, ctx, "a one-letter reviewer",
		chromedp.SetValue(chromedp.CSS(field("approved", "select")), "true"),
		chromedp.SendKeys(chromedp.CSS(field("reviewer", "input")), "a"),
		chromedp.Click(chromedp.CSS(`form[data-signal="decide"] button.send`)))
	if ok := browsertest.Get(t, ctx, "validity", chromedp.Evaluate[bool](valid)); ok {
		t.Error("the page takes a reviewer shorter than minLength")
	}
	browsertest.Do(t, ctx, "a box that is not JSON",
		chromedp.SendKeys(chromedp.CSS(field("reviewer", "input")), "nn"),
		chromedp.SendKeys(chromedp.CSS(field("extra", "textarea")), "[1,"),
		chromedp.Click(chromedp.CSS(`form[data-signal="decide"] button.send`)))
	if msg := browsertest.Get(t, ctx, "box", chromedp.Evaluate[string](`document.querySelector('`+field("extra", "textarea")+`').validationMessage`)); !strings.HasPrefix(msg, "not JSON") {
		t.Errorf("the JSON box says %q", msg)
	}
	if d, _ := f.srv.Show("r1"); !d.Run.Open() {
		t.Fatal("a form the page refused reached the run")
	}
	// JSON Schema's pattern holds anywhere in the text, as the page checks it.
	browsertest.Do(t, ctx, "a zip of two digits", chromedp.SetValue(chromedp.CSS(field("extra", "textarea")), `[{"k": 1}]`),
		chromedp.SendKeys(chromedp.CSS(field("zip", "input")), "12"))
	if ok := browsertest.Get(t, ctx, "zip", chromedp.Evaluate[bool](`document.querySelector('`+field("zip", "input")+`').checkValidity()`)); ok {
		t.Error("the page takes a zip of two digits")
	}
	browsertest.Do(t, ctx, "answer",
		chromedp.SendKeys(chromedp.CSS(field("zip", "input")), "345"),
		chromedp.SetValue(chromedp.CSS(field("level", "select")), "1"),
		chromedp.SendKeys(chromedp.CSS(field("amount", "input")), "12.5"),
		chromedp.SendKeys(chromedp.CSS(field("city", "input")), "Lyon"),
		chromedp.Click(chromedp.CSS(`form[data-signal="decide"] button.send`)),
		chromedp.WaitVisible(chromedp.CSS(`#flash`)))
	browsertest.Text(t, ctx, `#flash`, "Signal sent.")
	d := f.settle("r1", closed)
	var out struct{ Decision map[string]any }
	_ = json.Unmarshal(d.Output, &out)
	got, _ := json.Marshal(out.Decision)
	if want := `{"address":{"city":"Lyon","zip":"12345"},"amount":12.5,"approved":true,"extra":[{"k":1}],"level":"high","reviewer":"ann"}`; string(got) != want {
		t.Errorf("the run took %s, want %s", got, want)
	}
	until(t, ctx, "the drawing shows the step done", `document.querySelector('#graph g.node[data-path="steps[0]"]').dataset.state === 'completed'`)
}

// TestBrowserWorkflowPage: the schedules page links to the workflow's graph; its page shows
// the drawing, its version and the input form, which starts a run.
func TestBrowserWorkflowPage(t *testing.T) {
	f := newWebFixture(t)
	writeFile(t, filepath.Join(f.dir, "typed.wend.yaml"), typedSpec)
	ws, err := server.LoadWorkflows(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
	ctx := login(t, f)
	browsertest.Do(t, ctx, "open the workflows",
		chromedp.Navigate(f.base+"/ui/workflows"), chromedp.WaitVisible(chromedp.CSS(`#workflows`)),
		chromedp.Click(chromedp.CSS(`#workflows a[href="/ui/workflows/typed#graph-title"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#graph svg`)))
	if n := browsertest.Get(t, ctx, "boxes", chromedp.Evaluate[int](`[...document.querySelectorAll('#graph g.node')].filter(g => g.getBoundingClientRect().width > 0).length`)); n != 3 {
		t.Errorf("%d boxes drawn, want start, wait and end", n)
	}
	if v := browsertest.Get(t, ctx, "version", chromedp.Text(chromedp.CSS(`#wf-version`))); len(v) != 64 {
		t.Errorf("version %q is no sha256", v)
	}
	browsertest.Do(t, ctx, "start from the form",
		chromedp.SendKeys(chromedp.CSS(`#wf-start label[data-name="order_id"] input`), "A-1"),
		chromedp.SetValue(chromedp.CSS(`#wf-start-id`), "typed-2"),
		chromedp.Click(chromedp.CSS(`#wf-start-send`)),
		chromedp.WaitVisible(chromedp.CSS(`#flash`)))
	browsertest.Text(t, ctx, `#flash`, "Run started.")
	if d, err := f.srv.Show("typed-2"); err != nil || string(d.Input) != `{"order_id":"A-1"}` {
		t.Errorf("typed-2: %v %s", err, d.Input)
	}
}

// twoAsks waits for one answer, then for another.
const twoAsks = `wend: v1
name: asks
signals:
  first: {schema: {type: object, properties: {ok: {type: boolean}}}}
  second: {schema: {type: object, properties: {why: {type: string}}}}
steps:
  - {wait_for_signal: first}
  - {wait_for_signal: second}
`

// TestBrowserNextSignalForm: when the run goes on to wait for another signal, the page shows
// that signal's form without a reload by hand.
func TestBrowserNextSignalForm(t *testing.T) {
	f := newWebFixture(t)
	f.start("a1", twoAsks)
	f.settle("a1", waitingForSignal)
	ctx := login(t, f)
	browsertest.Do(t, ctx, "open the run",
		chromedp.Navigate(f.base+"/ui/runs/a1"), chromedp.WaitVisible(chromedp.CSS(`form[data-signal="first"]`)))
	if _, err := f.srv.Signal(t.Context(), "a1", "first", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, "the second form", has(`form[data-signal="second"]`)+` && `+`document.querySelector('form[data-signal="first"]') === null`)
}
