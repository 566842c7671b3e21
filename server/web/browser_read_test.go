package web

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/browsertest"
)

// TestBrowserReadTokenOffersNoActions signs in through the login form with the read token:
// the pages show the runs and the export, and no form or button that acts (start, batch,
// signal, cancel...); a post made from the page anyway is refused by the server (403) and
// the run stays as it was.
func TestBrowserReadTokenOffersNoActions(t *testing.T) {
	f := newWebFixture(t)
	f.withBatches()
	writeFile(t, filepath.Join(f.dir, "approval.wend.yaml"), waitSpec)
	ws, err := server.LoadWorkflows(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
	run := f.start("w1", waitSpec)
	f.settle("w1", waitingForSignal)
	ctx, _ := browsertest.Start(t)

	browsertest.Do(t, ctx, "sign in with the read token",
		chromedp.Navigate(f.base+"/ui/runs"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), servertest.ReadToken),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#runs`)))
	who := browsertest.Get(t, ctx, "who", chromedp.Text(chromedp.CSS(`#who`)))
	if !strings.Contains(who, "signed in to read") {
		t.Errorf("the header says %q, want it to say the session only reads", who)
	}
	acting := `document.querySelectorAll('form[method="post"], input.pick, #start-form, #batch-form, #signal-form, #actions button').length`
	if n := browsertest.Get(t, ctx, "act controls on the list", chromedp.Evaluate[int](acting)); n != 0 {
		t.Errorf("the runs list offers %d act controls to the read token", n)
	}
	if !browsertest.Get(t, ctx, "w1 listed", chromedp.Evaluate[bool](has(`tr[data-workflow-id="w1"]`))) {
		t.Errorf("the read token does not see w1 in the list")
	}

	browsertest.Do(t, ctx, "open the waiting run",
		chromedp.Navigate(f.base+"/ui/runs/w1"), chromedp.WaitVisible(chromedp.CSS(`#export`)))
	if n := browsertest.Get(t, ctx, "act controls on the run", chromedp.Evaluate[int](acting)); n != 0 {
		t.Errorf("the run page offers %d act controls to the read token", n)
	}
	status := browsertest.Get(t, ctx, "a cancel posted anyway", chromedp.Evaluate[int](
		`(async () => (await fetch('/ui/runs/`+run.RunID+`/cancel', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'reason=x'})).status)()`,
		chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("a cancel posted with the read session answered %d, want 403", status)
	}
	if d, _ := f.srv.Show("w1"); !d.Run.Open() {
		t.Errorf("w1 is %s after the read session's post", d.Run.Status)
	}
}
