package web

import (
	"regexp"
	"testing"
)

// TestRunPageTimesSayUTC: a run's page says its times are UTC where a reader first meets
// them (its start, its close, the timeline's axis), as the schedules page does.
func TestRunPageTimesSayUTC(t *testing.T) {
	f := newWebFixture(t)
	f.start("f1", webFailSpec)
	f.settle("f1", closed)
	_, _, body := f.send(req{Method: "GET", Path: "/ui/runs/f1", ReadSession: true})
	stamp := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC`
	for _, want := range []string{
		`<th>Started</th><td>` + stamp + `</td>`,
		`<th>Closed</th><td>` + stamp + ` \(after`,
		`<th class="axis"><span>` + stamp + `</span>`,
	} {
		if !regexp.MustCompile(want).MatchString(body) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestRunListTimesSayUTC: the run list's start times are UTC, and its column says so.
func TestRunListTimesSayUTC(t *testing.T) {
	f := newWebFixture(t)
	f.start("f1", webFailSpec)
	f.settle("f1", closed)
	_, _, body := f.send(req{Method: "GET", Path: "/ui/runs", ReadSession: true})
	if !regexp.MustCompile(`<th>Started \(UTC\)</th>`).MatchString(body) {
		t.Errorf("the run list's Started column does not say UTC")
	}
}
