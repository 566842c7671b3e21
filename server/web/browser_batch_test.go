package web

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/testkit/browsertest"
)

// withBatches gives the fixture's server batches over a memory store, as wend serve does.
func (f *webFixture) withBatches() {
	f.t.Helper()
	apptest.Batches(f.t, f.srv, nil)
}

// TestBrowserBatchFromTheList: runs ticked in the list stay ticked while the list refreshes;
// cancelling them from the list posts a batch whose page follows it to its end; the runs not
// ticked are left running.
func TestBrowserBatchFromTheList(t *testing.T) {
	f := newWebFixture(t)
	f.withBatches()
	for _, id := range []string{"w1", "w2", "w3"} {
		f.start(id, waitSpec)
		f.settle(id, waitingForSignal)
	}
	ctx := login(t, f)
	tick := func(id string) chromedp.Action[chromedp.Void] {
		return chromedp.Click(chromedp.CSS(`tr[data-workflow-id="` + id + `"] input.pick`))
	}
	browsertest.Do(t, ctx, "tick w1 and w3", chromedp.WaitVisible(chromedp.CSS(`#batch-form`)), tick("w1"), tick("w3"))

	// A new run changes the list, which the page swaps in: the ticks stay.
	f.start("w4", waitSpec)
	until(t, ctx, "the list shows w4", has(`tr[data-workflow-id="w4"]`))
	if got := browsertest.Get(t, ctx, "ticked", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('input.pick:checked')].map(b => b.closest('tr').dataset.workflowId)`)); len(got) != 2 || got[0] != "w3" || got[1] != "w1" {
		t.Fatalf("ticked after a refresh: %v, want [w3 w1]", got)
	}

	browsertest.Do(t, ctx, "cancel the runs ticked",
		chromedp.SendKeys(chromedp.CSS(`#batch-reason`), "bulk from the list"),
		chromedp.Click(chromedp.CSS(`#batch-send`)),
		chromedp.WaitVisible(chromedp.CSS(`#batch-live`)))
	until(t, ctx, "the batch completes", `document.querySelector('#batch-status').textContent === 'completed'`)
	browsertest.Text(t, ctx, `#batch-counts`, "2 of 2: 2 done, 0 failed, 0 skipped")
	for id, want := range map[string]string{"w1": "cancelled", "w3": "cancelled", "w2": "running", "w4": "running"} {
		if d, _ := f.srv.Show(id); d.Run.Status != want {
			t.Errorf("%s is %s, want %s", id, d.Run.Status, want)
		}
	}
}
