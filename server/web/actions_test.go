package web

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

// declaredSpec declares its signals: the form offers those names only.
const declaredSpec = `wend: v1
name: declared
plugins: {demo: ./demo}
signals:
  approve: {description: go ahead}
  reject: {description: stop}
steps:
  - id: wait
    wait_for_signal: approve
`

var actionButton = regexp.MustCompile(`id="act-([a-z]+)"`)

// buttons lists the action buttons a run's page offers a logged-in operator, and whether it
// has the signal form.
func buttons(t *testing.T, f *webFixture, id string) (acts []string, signal bool, body string) {
	t.Helper()
	code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/" + id, Session: true})
	if code != 200 {
		t.Fatalf("%s: %d", id, code)
	}
	for _, m := range actionButton.FindAllStringSubmatch(body, -1) {
		acts = append(acts, m[1])
	}
	return acts, strings.Contains(body, `id="signal-form"`), body
}

// TestUIActionsByStatus: a run's page offers only the actions its status allows: an
// open run signal, cancel, terminate and repair; a failed run retry while it is its workflow
// id's newest run; a completed, cancelled or terminated run none. The old page offered every
// button on every run.
func TestUIActionsByStatus(t *testing.T) {
	f := newWebFixture(t)
	post := func(id, action string) {
		t.Helper()
		body, h := form(f, url.Values{}, f.base)
		if code, hd, b := f.send(req{Method: "POST", Path: "/ui/runs/" + id + "/" + action, Body: body, Header: h, Session: true}); code != 303 {
			t.Fatalf("%s %s: %d %v %.300s", action, id, code, hd, b)
		}
	}
	f.start("open", waitSpec)
	f.settle("open", waitingForSignal)
	f.start("failed", webFailSpec)
	f.settle("failed", closed)
	f.start("done", webEchoSpec)
	f.settle("done", closed)
	f.start("cancelled", waitSpec)
	f.settle("cancelled", waitingForSignal)
	post("cancelled", "cancel")
	f.settle("cancelled", closed)
	f.start("terminated", waitSpec)
	f.settle("terminated", waitingForSignal)
	post("terminated", "terminate")
	f.settle("terminated", closed)

	tests := []struct {
		id     string
		acts   []string
		signal bool
	}{
		{"open", []string{"cancel", "terminate", "repair"}, true},
		{"failed", []string{"retry"}, false},
		{"done", nil, false},
		{"cancelled", nil, false},
		{"terminated", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			acts, signal, _ := buttons(t, f, tt.id)
			if !slices.Equal(acts, tt.acts) || signal != tt.signal {
				t.Errorf("buttons %v, signal form %v; want %v, %v", acts, signal, tt.acts, tt.signal)
			}
		})
	}

	// The form names the signal the run waits for.
	if _, _, body := buttons(t, f, "open"); !strings.Contains(body, `<datalist id="signal-names"><option value="approve">`) || !strings.Contains(body, `list="signal-names" value="approve"`) {
		t.Errorf("the signal form does not offer approve: %s", body)
	}

	// Retry is offered on the newest run of a workflow id only: after a retry, the failed
	// run it resumed offers none.
	post("failed", "retry")
	runs, _ := f.srv.List(history.RunFilter{WorkflowID: "failed"})
	if len(runs) != 2 {
		t.Fatalf("%d runs of failed", len(runs))
	}
	f.settle(runs[0].RunID, closed)
	if acts, _, _ := buttons(t, f, runs[1].RunID); len(acts) != 0 {
		t.Errorf("the retried run offers %v", acts)
	}
	if acts, _, _ := buttons(t, f, runs[0].RunID); !slices.Equal(acts, []string{"retry"}) {
		t.Errorf("the newest (failed again) run offers %v, want retry", acts)
	}
}

// TestUISignalFormDeclared: a workflow that declares its signals gets a choice of
// those names, the awaited one first, and no free text.
func TestUISignalFormDeclared(t *testing.T) {
	f := newWebFixture(t)
	f.start("d1", declaredSpec)
	f.settle("d1", waitingForSignal)
	_, signal, body := buttons(t, f, "d1")
	want := `<select name="name" id="signal-name" required><option value="approve">approve</option><option value="reject">reject</option></select>`
	if !signal || !strings.Contains(body, want) {
		t.Errorf("declared signals not offered as a choice: %s", body)
	}
}
