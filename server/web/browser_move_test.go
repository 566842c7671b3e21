package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/testkit/browsertest"
)

// TestBrowserMovesARunToTheRegisteredFile: in a browser signed in with the act token, the page
// of a run whose workflow is registered at another version shows the check's verdict; its
// button moves the run, and the page then names the new version and offers no move.
func TestBrowserMovesARunToTheRegisteredFile(t *testing.T) {
	f := moveFixture(t, moveAdds)
	ctx := login(t, f)
	browsertest.Do(t, ctx, "open the run",
		chromedp.Navigate(f.base+"/ui/runs/m1"), chromedp.WaitVisible(chromedp.CSS(`#move-verdict`)))
	if v := browsertest.Get(t, ctx, "verdict", chromedp.Text(chromedp.CSS(`#move-verdict`))); !strings.HasPrefix(v, "The check holds") {
		t.Fatalf("verdict %q", v)
	}
	browsertest.Do(t, ctx, "move it",
		chromedp.Click(chromedp.CSS(`#act-migrate`)), chromedp.WaitVisible(chromedp.CSS(`#flash`)))
	if flash := browsertest.Get(t, ctx, "flash", chromedp.Text(chromedp.CSS(`#flash`))); !strings.HasPrefix(flash, "Moved") {
		t.Fatalf("flash %q", flash)
	}
	to := history.SpecSHA256([]byte(moveAdds))
	if r, _ := f.srv.Resolve("m1"); r.SpecSHA256 != to {
		t.Fatalf("the run is on %s after the click, want %s", r.SpecSHA256, to)
	}
	if v := browsertest.Get(t, ctx, "version", chromedp.Text(chromedp.CSS(`#spec-version`))); v != "version "+to[:12] {
		t.Errorf("the page names %q after the move", v)
	}
	if browsertest.Get(t, ctx, "move offered", chromedp.Evaluate[bool](has(`#move`))) {
		t.Error("the page still offers the move")
	}
}
