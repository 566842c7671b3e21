package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/testkit/browsertest"
)

const e2eWait = `wend: v1
name: approval
plugins: {demo: ./demo}
steps:
  - id: greet
    activity: demo.greet
    with: {name: "${{ input.who }}"}
  - id: approve
    wait_for_signal: approve
  - id: record
    activity: demo.echo
    with: {approved_by: "${{ steps.approve.output.by }}"}
output: {by: "${{ steps.approve.output.by }}", hi: "${{ steps.greet.output.greeting }}"}
`

const e2eFail = `wend: v1
name: charge
plugins: {demo: ./demo}
steps:
  - id: charge
    activity: demo.fail
    with: {type: CardDeclined, message: "card declined by the bank", non_retryable: true}
`

// The activity returns markup that would run script if the page trusted it.
const e2eXSS = `wend: v1
name: hostile
plugins: {demo: ./demo}
steps:
  - id: evil
    activity: demo.echo
    with: {html: "<script>window.__xss = 1; alert('xss')</script><img src=x onerror=\"window.__xss = 2; alert(2)\">"}
output: {html: "${{ steps.evil.output.html }}"}
`

// The browser tests' helpers are package browsertest's.
var (
	browser  = browsertest.Start
	pageText = browsertest.Text
)

func browse(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browsertest.Do(t, ctx, what, actions...)
}

func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	return browsertest.Get(t, ctx, what, a)
}

// TestBrowser drives the web UI of a real wend serve in headless chromium: log in, the list,
// a run waiting for a signal signalled from its form until it completes, a failed run's
// category and non-retryable badge, and hostile activity output that must stay text.
func TestBrowser(t *testing.T) {
	browsertest.Need(t)
	s := startServe(t, map[string]string{"wait.wend.yaml": e2eWait, "fail.wend.yaml": e2eFail, "xss.wend.yaml": e2eXSS})
	s.start("order-7", "wait.wend.yaml", `{"who":"ann"}`)
	s.start("charge-3", "fail.wend.yaml", "")
	s.start("hostile-1", "xss.wend.yaml", "")
	s.waitStatus("order-7", "waiting", 20*time.Second)
	s.waitStatus("charge-3", "failed", 20*time.Second)
	s.waitStatus("hostile-1", "completed", 20*time.Second)
	ctx, dialog := browser(t)

	// Log in with the token; the list shows every run, newest first.
	browse(t, ctx, "log in and open the list",
		chromedp.Navigate(s.base+"/ui/login?token="+e2eToken),
		chromedp.WaitVisible(chromedp.CSS(`#runs`)))
	rows := get(t, ctx, "list rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#runs tr.run')].map(r => r.dataset.workflowId)`))
	if strings.Join(rows, ",") != "hostile-1,charge-3,order-7" {
		t.Errorf("list rows %v, want newest first", rows)
	}
	screenshot(t, ctx, "ui-runs.png")

	// Open the waiting run from the list, send the signal from its form, see it complete.
	browse(t, ctx, "open the waiting run",
		chromedp.Click(chromedp.CSS(`tr[data-workflow-id="order-7"] a.run-link`), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.CSS(`#signal-form`)))
	waiting := get(t, ctx, "signal wait", chromedp.Text(chromedp.CSS(`#waits .signal-name`)))
	if waiting != "approve" {
		t.Errorf("waits for %q, want approve", waiting)
	}
	pageText(t, ctx, `#run-status`, "running")
	pageText(t, ctx, `tr.step[data-path="steps[1]"] .badge`, "waiting")
	screenshot(t, ctx, "ui-run.png")
	browse(t, ctx, "send the signal",
		chromedp.SetValue(chromedp.CSS(`#signal-name`), "approve"), // the form offers it already
		chromedp.SendKeys(chromedp.CSS(`#signal-data`), `{"by": "ann"}`),
		chromedp.Click(chromedp.CSS(`#signal-send`)),
		chromedp.WaitVisible(chromedp.CSS(`#flash`)))
	pageText(t, ctx, `#flash`, "Signal sent.")
	pageText(t, ctx, `#run-status`, "completed")
	pageText(t, ctx, `tr.step[data-path="steps[2]"] .badge`, "completed")

	// A failed run shows its category and the non-retryable badge.
	browse(t, ctx, "open the failed run",
		chromedp.Navigate(s.base+"/ui/runs/charge-3"),
		chromedp.WaitVisible(chromedp.CSS(`#run-failure`)))
	cat := get(t, ctx, "category", chromedp.Text(chromedp.CSS(`#run-failure .badge.cat`)))
	badge := get(t, ctx, "badge", chromedp.Text(chromedp.CSS(`#run-failure .badge.nonretryable`)))
	msg := get(t, ctx, "message", chromedp.Text(chromedp.CSS(`#run-failure .err-text`)))
	if cat != "activity" || badge != "non-retryable" || msg != "card declined by the bank" {
		t.Errorf("failure shows category %q, badge %q, message %q", cat, badge, msg)
	}
	pageText(t, ctx, `#run-status`, "failed")

	// Hostile output is inert text: no script ran, no element was made from it.
	browse(t, ctx, "open the hostile run",
		chromedp.Navigate(s.base+"/ui/runs/hostile-1"),
		chromedp.WaitVisible(chromedp.CSS(`#run-output`)),
		chromedp.Sleep(500*time.Millisecond)) // time for an onerror handler to fire, were there one
	xss := get(t, ctx, "window.__xss", chromedp.Evaluate[string](`typeof window.__xss`))
	scripts := get(t, ctx, "scripts", chromedp.Evaluate[int](`document.querySelectorAll('script').length`))
	imgs := get(t, ctx, "images", chromedp.Evaluate[int](`document.querySelectorAll('img').length`))
	shown := get(t, ctx, "output", chromedp.Text(chromedp.CSS(`#run-output`)))
	if xss != "undefined" || dialog.Load() || scripts != 1 || imgs != 0 {
		t.Errorf("hostile output ran: window.__xss is %s, dialog %v, %d scripts, %d images", xss, dialog.Load(), scripts, imgs)
	}
	if !strings.Contains(shown, `<script>window.__xss = 1; alert('xss')</script>`) {
		t.Errorf("the output is not shown as text: %q", shown)
	}
}

// screenshot saves the page to docs/NAME when UPDATE_SCREENSHOTS=1 (the README shows them).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("UPDATE_SCREENSHOTS") != "1" {
		return
	}
	png := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
