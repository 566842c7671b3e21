package web

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/testkit/browsertest"
)

// The browser tests drive the UI of the web fixture in headless chromium, logged in with
// the token, and wait for what the page shows (selectors, texts), never a fixed time.

// login starts chromium and trades the token for the session cookie.
func login(t *testing.T, f *webFixture) context.Context {
	t.Helper()
	ctx, dialog := browsertest.Start(t)
	t.Cleanup(func() {
		if dialog.Load() {
			t.Error("a dialog opened: script ran that the UI does not ship")
		}
	})
	browsertest.Do(t, ctx, "log in",
		chromedp.Navigate(f.base+"/ui/login?token="+webToken),
		chromedp.WaitVisible(chromedp.CSS(`#runs`)))
	return ctx
}

// until waits until the JavaScript expression is true (the page refreshes itself by polling).
func until(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %s stayed false", what, expr)
}

func has(sel string) string {
	return `document.querySelector(` + browsertest.JSString(sel) + `) !== null`
}

// ids lists the ids of the elements sel matches.
func ids(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	return browsertest.Get(t, ctx, "ids of "+sel, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+browsertest.JSString(sel)+`)].map(e => e.id)`))
}

// TestBrowserRunActions: a failed run's page offers retry and nothing else; a
// waiting run's offers the signal form (naming the awaited signal), cancel, terminate and
// repair; cancelling it from the page closes it, and the page then offers nothing.
func TestBrowserRunActions(t *testing.T) {
	f := newWebFixture(t)
	f.start("f1", webFailSpec)
	f.settle("f1", closed)
	f.start("w1", waitSpec)
	f.settle("w1", waitingForSignal)
	ctx := login(t, f)

	browsertest.Do(t, ctx, "open the failed run",
		chromedp.Navigate(f.base+"/ui/runs/f1"), chromedp.WaitVisible(chromedp.CSS(`#run-failure`)))
	if got := ids(t, ctx, `#actions button`); !slices.Equal(got, []string{"act-retry"}) {
		t.Errorf("the failed run offers %v, want only retry", got)
	}

	browsertest.Do(t, ctx, "open the waiting run",
		chromedp.Navigate(f.base+"/ui/runs/w1"), chromedp.WaitVisible(chromedp.CSS(`#signal-form`)))
	if got := ids(t, ctx, `#actions button`); !slices.Equal(got, []string{"signal-send", "act-cancel", "act-terminate", "act-repair"}) {
		t.Errorf("the waiting run offers %v", got)
	}
	if v := browsertest.Get(t, ctx, "signal name", chromedp.Value(chromedp.CSS(`#signal-name`))); v != "approve" {
		t.Errorf("the signal form names %q, want approve", v)
	}
	browsertest.Do(t, ctx, "cancel from the page",
		chromedp.SendKeys(chromedp.CSS(`form[action$="/cancel"] input[name="reason"]`), "not needed"),
		chromedp.Click(chromedp.CSS(`#act-cancel`)),
		chromedp.WaitVisible(chromedp.CSS(`#flash`)))
	browsertest.Text(t, ctx, `#flash`, "Cancel requested.")
	browsertest.Text(t, ctx, `#run-status`, "cancelled")
	until(t, ctx, "the closed run's buttons go", `document.querySelectorAll('#actions button').length === 0`)
	if d, _ := f.srv.Show("w1"); d.Run.Status != "cancelled" {
		t.Errorf("w1 is %s after cancel from the page", d.Run.Status)
	}
}

// TestBrowserLargeRun: a 120-item loop's activities are one summary row that expands
// 50 cards a page; the events page 100 at a time, in full or one line each; the timeline
// draws a visible bar for each step that ran.
func TestBrowserLargeRun(t *testing.T) {
	f := newWebFixture(t)
	startMany(t, f, "big", 120)
	ctx := login(t, f)
	browsertest.Do(t, ctx, "open the run",
		chromedp.Navigate(f.base+"/ui/runs/big"), chromedp.WaitVisible(chromedp.CSS(`.group`)))
	browsertest.Text(t, ctx, `.group [data-count="completed"]`, "completed 120")
	if n := browsertest.Get(t, ctx, "cards", chromedp.Evaluate[int](`document.querySelectorAll('.card.activity').length`)); n != 1 {
		t.Errorf("%d activity cards collapsed, want 1 (the step outside the loop)", n)
	}

	// The timeline: one bar per step that ran, each drawn with a width.
	bars := browsertest.Get(t, ctx, "bars", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#gantt tr.gantt-row')].filter(r => { const b = r.querySelector('rect.bar'); return b && b.getBoundingClientRect().width > 0 }).map(r => r.dataset.path)`))
	if strings.Join(bars, " ") != "steps[0] steps[0].steps[0] steps[1]" {
		t.Errorf("timeline bars for %v", bars)
	}

	browsertest.Do(t, ctx, "expand the loop",
		chromedp.Click(chromedp.CSS(`.group a.expand`)), chromedp.WaitVisible(chromedp.CSS(`.group .group-pager`)))
	browsertest.Text(t, ctx, `.group .card.activity:nth-of-type(1) .badge`, "completed")
	until(t, ctx, "50 cards", `document.querySelectorAll('.group .card.activity').length === 50`)
	browsertest.Do(t, ctx, "next page of the loop",
		chromedp.Click(chromedp.CSS(`.group a.next`)), chromedp.WaitVisible(chromedp.CSS(`.group a.collapse`)))
	until(t, ctx, "page 2", `document.querySelector('.group-pager').textContent.includes('page 2 of 3')`)

	browsertest.Do(t, ctx, "compact events",
		chromedp.Click(chromedp.CSS(`#events-compact`)), chromedp.WaitVisible(chromedp.CSS(`#event-lines`)))
	until(t, ctx, "100 lines", `document.querySelectorAll('#event-lines li').length === 100`)
	until(t, ctx, "the loop stays expanded", has(`.group .group-pager`))
	browsertest.Do(t, ctx, "older events",
		chromedp.Click(chromedp.CSS(`.events-pager a.older`)), chromedp.WaitVisible(chromedp.CSS(`.events-pager a.newer`)))
	until(t, ctx, "page 2 of the events", `document.querySelector('.events-pager').textContent.includes('page 2 of')`)
	until(t, ctx, "still compact", has(`#event-lines`))
}

// TestBrowserCompensatedFilter: ticking "compensated" lists the compensated run only.
func TestBrowserCompensatedFilter(t *testing.T) {
	f := newWebFixture(t)
	f.start("saga-1", sagaSpec)
	f.settle("saga-1", closed)
	f.start("plain-1", webFailSpec)
	f.settle("plain-1", closed)
	ctx := login(t, f)
	until(t, ctx, "both listed", `document.querySelectorAll('#runs tr.run').length === 2`)
	browsertest.Do(t, ctx, "filter", chromedp.Click(chromedp.CSS(`#compensated`)), chromedp.Click(chromedp.CSS(`#filter`)))
	until(t, ctx, "the filtered list", `location.search.includes('compensated=1') && document.querySelectorAll('#runs tr.run').length === 1`)
	rows := browsertest.Get(t, ctx, "rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#runs tr.run')].map(r => r.dataset.workflowId)`))
	if !slices.Equal(rows, []string{"saga-1"}) {
		t.Errorf("compensated lists %v", rows)
	}
}

// TestBrowserStartForm: the start form shows an input the schema refuses as an error
// on the form, keeping the text; valid input starts the run and opens its page.
func TestBrowserStartForm(t *testing.T) {
	f := newWebFixture(t)
	writeFile(t, filepath.Join(f.dir, "typed.wend.yaml"), typedSpec)
	ws, err := server.LoadWorkflows(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
	ctx := login(t, f)
	browsertest.Do(t, ctx, "bad input",
		chromedp.Click(chromedp.CSS(`#start summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#start-input`)),
		chromedp.SendKeys(chromedp.CSS(`#start-input`), `{"order_id": 7}`),
		chromedp.Click(chromedp.CSS(`#start-send`)),
		chromedp.WaitVisible(chromedp.CSS(`#error`)))
	browsertest.Text(t, ctx, `#error`, "invalid input: input.order_id: expected string, got integer")
	if v := browsertest.Get(t, ctx, "kept input", chromedp.Value(chromedp.CSS(`#start-input`))); v != `{"order_id": 7}` {
		t.Errorf("the form kept %q", v)
	}
	browsertest.Do(t, ctx, "good input",
		chromedp.SetValue(chromedp.CSS(`#start-input`), `{"order_id": "A-7"}`),
		chromedp.SetValue(chromedp.CSS(`#start-id`), "typed-1"),
		chromedp.Click(chromedp.CSS(`#start-send`)),
		chromedp.WaitVisible(chromedp.CSS(`#flash`)))
	browsertest.Text(t, ctx, `#flash`, "Run started.")
	browsertest.Text(t, ctx, `#run-status`, "running")
	until(t, ctx, "the new run's page", `location.pathname.startsWith('/ui/runs/') && document.body.textContent.includes('typed-1')`)
}
