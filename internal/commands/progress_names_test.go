package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// goldenFile compares got with testdata/NAME; UPDATE=1 rewrites it (review the diff).
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (UPDATE=1 creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (UPDATE=1 rewrites it after review):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

const progressSpec = `wend: v1
name: ship
plugins: {p: ./p}
steps:
  - id: ship
    parallel:
      - activity: p.notify
      - steps: [{activity: p.pick}, {activity: p.wrap}]
  - activity: p.bill
    compensate_with: {activity: p.refund}
`

// startedEvent is a run's first event, carrying its spec's text.
func startedEvent(t *testing.T, src string) history.Event {
	t.Helper()
	data, err := json.Marshal(history.Started{SpecFile: "ship.wend.yaml", SpecSource: src, RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	return history.Event{Seq: 1, Type: history.WorkflowStarted, Data: data}
}

func activity(step, act string) history.Event {
	return history.Event{Type: history.ActivityScheduled, Step: step, Data: []byte(`{"plugin":"p","activity":"` + act + `"}`)}
}

// TestProgressNamesSteps: progress lines named steps by position
// (steps[0].parallel[1].steps[1]); they show ids and places.
func TestProgressNamesSteps(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, start: now, now: func() time.Time { return now }}
	run := history.Run{WorkflowID: "w", RunID: "r1"}
	for _, ev := range []history.Event{
		startedEvent(t, progressSpec),
		activity("steps[0].parallel[0]", "notify"),
		activity("steps[0].parallel[1].steps[1]", "wrap"),
		activity("steps[1]", "bill"),
		{Type: history.CompensationStarted, Step: "steps[1]", Data: []byte(`{"step":"steps[1]","reason":"cancel"}`)},
		activity("steps[1].compensate_with", "refund"),
	} {
		p.observe(run, ev)
	}
	goldenFile(t, "progress/names.txt", buf.Bytes())
}

// TestProgressNamesStepsOfResumedRun: a run resumed after a crash is followed from the middle,
// without its WorkflowStarted; its steps keep the names they had before the crash, read from
// the run's first event, not their places.
func TestProgressNamesStepsOfResumedRun(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	run := history.Run{WorkflowID: "w", RunID: "r1"}
	for _, c := range []struct {
		name    string
		started func(string) (history.Started, bool)
		want    string
	}{
		{"first event read", func(id string) (history.Started, bool) {
			return history.Started{SpecFile: "ship.wend.yaml", SpecSource: progressSpec, RunID: id}, true
		}, "w ship › branch 2 › step 2: p.wrap scheduled"},
		{"no history to read", func(string) (history.Started, bool) { return history.Started{}, false },
			"w step 1 › branch 2 › step 2: p.wrap scheduled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &progress{w: &buf, start: now, now: func() time.Time { return now }, started: c.started}
			p.observe(run, activity("steps[0].parallel[1].steps[1]", "wrap"))
			if !strings.Contains(buf.String(), c.want) {
				t.Errorf("got %q; want %q in it", buf.String(), c.want)
			}
		})
	}
}

// TestProgressSaysCaught: a failure a catch handles (the step's own catch, or an enclosing
// step's) says so on its line; one no catch handles, and a try's failure, do not; a message's
// newline stays escaped on its line.
func TestProgressSaysCaught(t *testing.T) {
	const src = `wend: v1
name: caught
plugins: {p: ./p}
steps:
  - id: charge
    activity: p.charge
    catch: {steps: [], set: {declined: true}}
  - id: wrap
    steps:
      - {id: inner, fail: boom}
    catch: {steps: [], set: {wrapped: true}}
  - {id: last, fail: boom}
`
	failed := func(typ history.EventType, step, msg string) history.Event {
		data, _ := json.Marshal(history.AttemptFailure{Failure: history.Failure{Category: "activity", Message: msg}})
		return history.Event{Type: typ, Step: step, Attempt: 1, Data: data}
	}
	var buf bytes.Buffer
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, start: now, now: func() time.Time { return now }}
	run := history.Run{WorkflowID: "w", RunID: "r1"}
	for _, ev := range []history.Event{
		startedEvent(t, src),
		failed(history.ActivityAttemptFailed, "steps[0]", "card declined\nby the bank"),
		failed(history.ActivityFailed, "steps[0]", "card declined for good"),
		failed(history.StepFailed, "steps[1].steps[0]", "inner boom"),
		failed(history.StepFailed, "steps[2]", "last boom"),
	} {
		p.observe(run, ev)
	}
	goldenFile(t, "progress/caught.txt", buf.Bytes())
}
