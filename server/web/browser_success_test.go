package web

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/testkit/browsertest"
)

// recoveredSpec completes after a wait whose timeout its catch handles and a step that
// succeeds on its third of five tries.
const recoveredSpec = `wend: v1
name: dunning
plugins: {demo: ./demo}
steps:
  - id: paid
    wait_for_signal: paid
    timeout: 200ms
    catch:
      - steps:
          - {id: remind, activity: demo.echo, with: {to: "${{ input.who }}"}}
  - id: charge
    activity: demo.recovers
    retry: {tries: 5, backoff: [50ms]}
`

// TestBrowserSuccessfulRunPage: the page of a run that completed does not look failed: the
// wait whose timeout was caught is "caught", not a red "failed"; the step that completed on its
// third try has no note of the earlier tries' error, its timeline bar marks the two failed
// tries, and its card says "tries 3 of 5". A cancelled run's failure names the reason once.
func TestBrowserSuccessfulRunPage(t *testing.T) {
	f := newWebFixture(t)
	f.start("ok1", recoveredSpec)
	if d := f.settle("ok1", closed); d.Run.Status != "completed" {
		t.Fatalf("ok1 ended %s", d.Run.Status)
	}
	f.start("c1", waitSpec)
	f.settle("c1", waitingForSignal)
	if _, err := f.srv.Cancel(context.Background(), "c1", "customer disputes"); err != nil {
		t.Fatal(err)
	}
	f.settle("c1", closed)
	ctx := login(t, f)

	browsertest.Do(t, ctx, "open the completed run",
		chromedp.Navigate(f.base+"/ui/runs/ok1"), chromedp.WaitVisible(chromedp.CSS(`#steps`)))
	browsertest.Text(t, ctx, `#run-status`, "completed")
	browsertest.Text(t, ctx, `#steps tr[data-path="steps[0]"] .badge`, "caught")
	browsertest.Text(t, ctx, `#steps tr[data-path="steps[0]"] td.msg`, "wait_for_signal step timed out after 200ms")
	browsertest.Text(t, ctx, `#steps tr[data-path="steps[1]"] .badge`, "completed")
	browsertest.Text(t, ctx, `#steps tr[data-path="steps[1]"] td.msg`, "")
	if n := browsertest.Get(t, ctx, "failed badges", chromedp.Evaluate[int](`document.querySelectorAll('#steps .badge.s-failed').length`)); n != 0 {
		t.Errorf("%d steps of the completed run show failed", n)
	}
	tries := browsertest.Get(t, ctx, "failed tries on the timeline", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#gantt tr[data-path="steps[1]"] rect.try-failed')].filter(r => r.getBoundingClientRect().width > 0).map(r => r.textContent)`))
	if len(tries) != 2 || tries[0] != "try 1 failed: Busy: try later" || tries[1] != "try 2 failed: Busy: try later" {
		t.Errorf("the charge bar marks %q, want its two failed tries", tries)
	}
	browsertest.Text(t, ctx, `.card.activity[data-exec$="steps[1]"] .tries`, "tries 3 of 5")

	browsertest.Do(t, ctx, "open the cancelled run",
		chromedp.Navigate(f.base+"/ui/runs/c1"), chromedp.WaitVisible(chromedp.CSS(`#run-failure`)))
	browsertest.Text(t, ctx, `#run-failure .err-text`, "customer disputes")
}
