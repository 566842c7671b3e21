package web

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// caughtSpec's charge fails; its state-only catch records the decline and the run goes on.
const caughtSpec = `wend: v1
name: caught
plugins: {demo: ./demo}
steps:
  - id: charge
    activity: demo.fail
    with: {message: declined}
    catch: {steps: [], set: {declined: true}}
  - id: after
    activity: demo.echo
    with: {ok: true}
`

// TestRunPageSaysCaught: a step whose failure a state-only catch handled shows a "caught"
// badge, not a red "failed", its catch row reads completed, not "none", and its failure is
// marked caught.
func TestRunPageSaysCaught(t *testing.T) {
	f := newWebFixture(t)
	f.start("c1", caughtSpec)
	f.settle("c1", closed)
	code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/c1", ReadSession: true})
	if code != 200 {
		t.Fatalf("run page: %d", code)
	}
	for _, want := range []string{
		`<tr class="step" data-path="steps[0]" data-status="caught">`,
		`<tr class="step" data-path="steps[0].catch" data-status="completed">`,
		`<tr class="step" data-path="steps[1]" data-status="completed">`,
		`<span class="badge s-caught" data-caught="true">caught</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %s", want)
		}
	}
	if strings.Contains(body, `data-status="failed"`) {
		t.Error("the run page shows a failed step in a run whose failure was caught")
	}
}

// TestRunPageNamesAnEmptyReason: a run cancelled with no reason reads "Cancelled (no reason
// given)" in its failure card, not "Cancelled: " followed by nothing.
func TestRunPageNamesAnEmptyReason(t *testing.T) {
	f := newWebFixture(t)
	f.start("w1", waitSpec)
	f.settle("w1", waitingForSignal)
	if _, err := f.srv.Cancel(context.Background(), "w1", ""); err != nil {
		t.Fatal(err)
	}
	f.settle("w1", closed)
	code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/w1", ReadSession: true})
	if code != 200 {
		t.Fatalf("run page: %d", code)
	}
	card := regexp.MustCompile(`(?s)<div class="failure card" id="run-failure">.*?</div>`).FindString(body)
	if !strings.Contains(card, "(no reason given)") || strings.Contains(card, "</b>: <span") {
		t.Errorf("the failure card does not name the empty reason:\n%s", card)
	}
}
