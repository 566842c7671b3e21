package web

import (
	"strings"
	"testing"
)

// sagaSpec books, then fails; its compensation undoes the booking.
const sagaSpec = `wend: v1
name: saga
compensate_on_failure: true
plugins: {demo: ./demo}
steps:
  - id: book
    activity: demo.echo
    with: {booked: true}
    compensate_with:
      activity: demo.echo
      with: {unbooked: true}
  - id: charge
    activity: demo.fail
    with: {message: declined}
`

// TestUICompensatedFilter: ?compensated=1 lists only the runs whose compensations
// ran, and the filter form keeps the choice across its links.
func TestUICompensatedFilter(t *testing.T) {
	f := newWebFixture(t)
	f.start("saga-1", sagaSpec)
	f.settle("saga-1", closed)
	f.start("plain-1", webFailSpec)
	f.settle("plain-1", closed)
	f.start("open-1", waitSpec)
	f.settle("open-1", waitingForSignal)
	tests := []struct {
		path        string
		shown, hide []string
	}{
		{"/ui/runs", []string{"saga-1", "plain-1", "open-1"}, nil},
		{"/ui/runs?compensated=1", []string{"saga-1"}, []string{"plain-1", "open-1"}},
		{"/ui/runs?compensated=1&status=failed", []string{"saga-1"}, []string{"plain-1"}},
		{"/ui/runs?compensated=1&status=running", nil, []string{"saga-1", "open-1"}},
	}
	for _, tt := range tests {
		for range 2 { // the second time from the remembered answers
			code, _, body := f.send(req{Method: "GET", Path: tt.path, ReadSession: true})
			if code != 200 {
				t.Fatalf("%s: %d", tt.path, code)
			}
			for _, id := range tt.shown {
				if !strings.Contains(body, `data-workflow-id="`+id+`"`) {
					t.Errorf("%s lacks %s", tt.path, id)
				}
			}
			for _, id := range tt.hide {
				if strings.Contains(body, `data-workflow-id="`+id+`"`) {
					t.Errorf("%s lists %s", tt.path, id)
				}
			}
			if strings.Contains(tt.path, "compensated") && (!strings.Contains(body, `id="compensated" checked`) ||
				!strings.Contains(body, `href="/ui/runs?compensated=1&amp;status=failed"`)) {
				t.Errorf("%s: the filter is not kept in the form and the status links", tt.path)
			}
		}
	}
}
