package web

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/spec/graph"
)

// Each row of the step tree is drawn in one of the eight states, with a word, whatever its
// status and compensation.
func TestDrawState(t *testing.T) {
	for _, c := range []struct {
		step        runview.Step
		state, text string
	}{
		{runview.Step{Status: runview.StepNone}, "none", "not reached"},
		{runview.Step{Status: runview.StepRunning}, "running", "running"},
		{runview.Step{Status: runview.StepRetrying}, "running", "running (retrying)"},
		{runview.Step{Status: runview.StepWaiting}, "waiting", "waiting"},
		{runview.Step{Status: runview.StepCompleted}, "completed", "completed"},
		{runview.Step{Status: runview.StepFailed}, "failed", "failed"},
		{runview.Step{Status: runview.StepCaught}, "caught", "caught"},
		{runview.Step{Status: runview.StepCancelled}, "cancelled", "cancelled"},
		{runview.Step{Status: runview.StepCompleted, Compensation: runview.CompensationCompleted}, "compensated", "compensated"},
		{runview.Step{Status: runview.StepCompleted, Compensation: runview.CompensationStarted}, "running", "compensating"},
		{runview.Step{Status: runview.StepCompleted, Compensation: runview.CompensationFailed}, "failed", "compensation failed"},
		{runview.Step{Status: "something_new"}, "running", "something_new"},
	} {
		state, text := drawState(c.step)
		if state != c.state || text != c.text {
			t.Errorf("%+v drawn %s %q, want %s %q", c.step, state, text, c.state, c.text)
		}
	}
}

// loopItems counts a for_each's items by state from the events: an item is as far as its
// worst step instance, a caught failure counts caught, a wait inside an item makes it
// waiting, and a nested loop's items count under the inner loop's static path.
func TestLoopItems(t *testing.T) {
	ev := func(seq uint64, step string, typ history.EventType) history.Event {
		return history.Event{Seq: seq, Step: step, Type: typ}
	}
	for _, c := range []struct {
		name   string
		events []history.Event
		caught map[uint64]bool
		waits  []runview.Wait
		want   map[string]itemCounts
	}{
		{name: "no loop", events: []history.Event{ev(1, "steps[0]", history.ActivityCompleted)}, want: map[string]itemCounts{}},
		{name: "done, running, failed", events: []history.Event{
			ev(1, "steps[1]@0.steps[0]", history.ActivityScheduled), ev(2, "steps[1]@0.steps[0]", history.ActivityCompleted),
			ev(3, "steps[1]@1.steps[0]", history.ActivityScheduled),
			ev(4, "steps[1]@2.steps[0]", history.ActivityScheduled), ev(5, "steps[1]@2.steps[0]", history.ActivityFailed),
		}, want: map[string]itemCounts{"steps[1]": {"completed": 1, "running": 1, "failed": 1}}},
		{name: "caught failure, and a step done then failing later", events: []history.Event{
			ev(1, "steps[0]@0.steps[0]", history.ActivityFailed), ev(2, "steps[0]@0.steps[0].catch[0]", history.ActivityCompleted),
			ev(3, "steps[0]@1.steps[0]", history.TimerScheduled), ev(4, "steps[0]@1.steps[0]", history.TimerFired),
			ev(5, "steps[0]@1.steps[0]", history.TimerCancelled),
			ev(6, "steps[0]@2.steps[0]", history.TimerFired), ev(7, "steps[0]@2.steps[0]", history.StepFailed),
		}, caught: map[uint64]bool{1: true}, want: map[string]itemCounts{"steps[0]": {"caught": 1, "completed": 1, "failed": 1}}},
		{name: "a signal wait inside an item", events: []history.Event{
			ev(1, "steps[0]@0.steps[0]", history.ActivityCompleted), ev(2, "steps[0]@1.steps[0]", history.ActivityCompleted),
		}, waits: []runview.Wait{{Kind: runview.WaitSignal, Step: "steps[0]@1.steps[1]", Signal: "ok"}},
			want: map[string]itemCounts{"steps[0]": {"completed": 1, "waiting": 1}}},
		{name: "an activity try due inside an item", events: []history.Event{
			ev(1, "steps[0]@0.steps[0]", history.ActivityScheduled), ev(2, "steps[0]@0.steps[0]", history.ActivityRetryScheduled),
		}, waits: []runview.Wait{{Kind: runview.WaitActivity, Step: "steps[0]@0.steps[0]"}},
			want: map[string]itemCounts{"steps[0]": {"running": 1}}},
		{name: "nested loops", events: []history.Event{
			ev(1, "steps[0]@0.steps[0]@0.steps[0]", history.ActivityCompleted),
			ev(2, "steps[0]@0.steps[0]@1.steps[0]", history.ActivityScheduled),
			ev(3, "steps[0]@1.steps[0]@0.steps[0]", history.ActivityCompleted),
		}, want: map[string]itemCounts{"steps[0]": {"running": 1, "completed": 1}, "steps[0].steps[0]": {"completed": 2, "running": 1}}},
		{name: "heartbeat only", events: []history.Event{ev(1, "steps[0]@3.steps[0]", history.ActivityHeartbeatRecorded)},
			want: map[string]itemCounts{"steps[0]": {"running": 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := loopItems(c.events, c.caught, c.waits)
			if !maps.EqualFunc(got, c.want, func(a, b itemCounts) bool { return maps.Equal(a, b) }) {
				t.Errorf("items %v, want %v", got, c.want)
			}
		})
	}
}

// A loop's counts read worst first and wrap to the drawing's width.
func TestItemCountsText(t *testing.T) {
	for _, c := range []struct {
		counts itemCounts
		want   string
	}{
		{itemCounts{"completed": 1}, "1 item: 1 completed"},
		{itemCounts{"completed": 16417, "running": 1}, "16418 items: 1 running, 16417 completed"},
		{itemCounts{"completed": 16412, "running": 3, "waiting": 2, "failed": 1, "caught": 4},
			"16422 items: 1 failed, 2 waiting,\n3 running, 4 caught, 16412 completed"},
	} {
		if got := c.counts.text(); got != c.want {
			t.Errorf("%v reads %q, want %q", c.counts, got, c.want)
		}
	}
}

// stepMarks gives every row its state and link, a for_each its counts, and the steps the
// run waits at now the highlight and what they wait for (once, however many items wait).
func TestStepMarks(t *testing.T) {
	steps := []runview.Step{
		{Path: "steps[0]", Kind: "activity", Status: runview.StepCompleted},
		{Path: "steps[1]", Kind: "for_each", Status: runview.StepWaiting},
		{Path: "steps[1].steps[0]", Kind: "wait_for_signal", Status: runview.StepWaiting, Instances: 2},
		{Path: "steps[2]", Kind: "delay", Status: runview.StepNone},
	}
	waits := []runview.Wait{
		{Kind: runview.WaitSignal, Step: "steps[1]@0.steps[0]", Signal: "ok"},
		{Kind: runview.WaitSignal, Step: "steps[1]@1.steps[0]", Signal: "ok"},
		{Kind: runview.WaitTimer, Step: "steps[9]", Until: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, // no such row
	}
	loops := map[string]itemCounts{"steps[1]": {"waiting": 2, "completed": 1}}
	got := stepMarks(steps, waits, loops, func(p string) string { return "#" + p })
	want := map[string]graph.Mark{
		"steps[0]":          {State: "completed", Text: "completed", Href: "#steps[0]"},
		"steps[1]":          {State: "waiting", Text: "waiting\n3 items: 2 waiting, 1 completed", Href: "#steps[1]"},
		"steps[1].steps[0]": {State: "waiting", Text: "waiting\nthe run waits here", Current: true, Href: "#steps[1].steps[0]"},
		"steps[2]":          {State: "none", Text: "not reached", Href: "#steps[2]"},
	}
	if !maps.Equal(got, want) {
		t.Errorf("marks\n%v\nwant\n%v", got, want)
	}
}

// childSpec is the workflow kindsSpec runs as a child.
const childSpec = "wend: v1\nname: child\nplugins: {demo: ./demo}\nsteps: [{id: work, activity: demo.echo, with: {x: 1}}]\n"

// kindsSpec has a step of each kind and stops at a signal wait, with a step after it.
const kindsSpec = `wend: v1
name: kinds
plugins: {demo: ./demo}
steps:
  - id: greet
    activity: demo.echo
    with: {hi: 1}
  - id: both
    parallel:
      - {id: left, activity: demo.echo, with: {x: 1}}
      - {id: nap, delay: 10ms}
  - id: each
    for_each: [1, 2, 3]
    steps:
      - {id: label, activity: demo.echo, with: {item: "${{ item }}"}}
  - id: charge
    activity: demo.fail
    with: {message: declined}
    catch:
      - {id: fallback, activity: demo.echo, with: {fallback: true}}
  - id: sub
    run_workflow: child.wend.yaml
  - id: approve
    wait_for_signal: approve
  - id: later
    activity: demo.echo
    with: {x: 2}
`

// cancelSpec naps for an hour; cancelling it cancels the nap.
const cancelSpec = `wend: v1
name: napper
steps:
  - {id: nap, delay: 1h}
`

var runIDs = regexp.MustCompile(`/ui/runs/[0-9a-f]{8,}`)

// The run page draws the workflow with each step's state: golden SVGs for an open run with
// a step of each kind (waiting at a signal), a compensated saga, a cancelled run and a run
// whose activity waits for its next try.
func TestRunGraphGolden(t *testing.T) {
	f := newWebFixture(t)
	writeFile(t, filepath.Join(f.dir, "child.wend.yaml"), childSpec)
	f.start("kinds", kindsSpec)
	f.settle("kinds", waitingForSignal)
	f.start("saga", sagaSpec)
	f.settle("saga", closed)
	f.start("nap", cancelSpec)
	f.settle("nap", func(d api.RunDetail) bool { return len(d.Waits) > 0 })
	if _, err := f.srv.Cancel(t.Context(), "nap", "not needed"); err != nil {
		t.Fatal(err)
	}
	f.settle("nap", closed)
	f.start("flaky", servertest.FlakySpec)
	f.settle("flaky", func(d api.RunDetail) bool { return len(d.Waits) > 0 && !d.Waits[0].Until.IsZero() })
	for _, id := range []string{"kinds", "saga", "nap", "flaky"} {
		code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/" + id, ReadSession: true})
		if code != 200 {
			t.Fatalf("%s: %d", id, code)
		}
		svg := drawingOf(t, body)
		svg = runIDs.ReplaceAllString(svg, "/ui/runs/RUN")
		golden := filepath.Join("testdata", "golden", "run-"+id+".svg")
		if os.Getenv("UPDATE") != "" {
			if err := os.WriteFile(golden, []byte(svg), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (UPDATE=1 go test ./server/web -run RunGraphGolden writes it)", err)
		}
		if svg != string(want) {
			t.Errorf("%s's drawing differs from %s:\n%s", id, golden, svg)
		}
	}
}

// drawingOf is the run page's inline drawing.
func drawingOf(t *testing.T, body string) string {
	t.Helper()
	i := strings.Index(body, `<svg xmlns="http://www.w3.org/2000/svg"`)
	j := strings.Index(body[max(i, 0):], "</svg>")
	if i < 0 || j < 0 {
		t.Fatalf("the page has no drawing:\n%.2000s", body)
	}
	return body[i : i+j+len("</svg>\n")]
}

// A click on a step's box opens its detail on the page: its state, what it waits for and its
// activities' cards (tries, input, output), a loop's a page at a time; a path that names no
// step shows no detail.
func TestRunPageStepDetail(t *testing.T) {
	f := newWebFixture(t)
	writeFile(t, filepath.Join(f.dir, "child.wend.yaml"), childSpec)
	f.start("kinds", kindsSpec)
	f.settle("kinds", waitingForSignal)
	get := func(q string) string {
		t.Helper()
		code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/kinds?" + q, ReadSession: true})
		if code != 200 {
			t.Fatalf("%s: %d", q, code)
		}
		return body
	}
	body := get("")
	if !strings.Contains(body, `<a href="/ui/runs/`) || !strings.Contains(body, `?step=steps%5B2%5D#step-detail">`) {
		t.Fatalf("the loop's box links to no detail:\n%s", drawingOf(t, body))
	}
	body = get("step=" + url.QueryEscape("steps[2]"))
	for _, want := range []string{`id="step-detail" data-path="steps[2]" data-state="completed"`, `3 activities`} {
		if !strings.Contains(body, want) {
			t.Errorf("the loop's detail lacks %q", want)
		}
	}
	detail := body[strings.Index(body, `id="step-detail"`):]
	detail = detail[:strings.Index(detail, "</section>")]
	if n := strings.Count(detail, `class="card activity"`); n != 3 {
		t.Errorf("the loop's detail shows %d activity cards, want 3", n)
	}
	body = get("step=" + url.QueryEscape("steps[5]"))
	for _, want := range []string{`data-path="steps[5]" data-state="waiting"`, `Waits now: signal &#34;approve&#34; at approve`, `No activity ran at this step.`} {
		if !strings.Contains(body, want) {
			t.Errorf("the wait's detail lacks %q", want)
		}
	}
	body = get("step=" + url.QueryEscape("steps[6]"))
	if !strings.Contains(body, `it has not been reached`) {
		t.Error("the unreached step's detail does not say so")
	}
	if body = get("step=nothing"); strings.Contains(body, `id="step-detail"`) {
		t.Error("a path that names no step opened a detail")
	}
}

// hostileSpec puts markup where the drawing shows text: an if expression and a signal name.
const hostileSpec = `wend: v1
name: hostile
plugins: {demo: ./demo}
steps:
  - id: greet
    if: "${{ input.who != '</svg><script>alert(1)</script><b x=\"' }}"
    activity: demo.echo
    with: {hi: 1}
  - id: approve
    wait_for_signal: "approve"
`

// The drawing of a spec with markup in its texts holds that markup as text: the page gains
// no element and keeps one script, its own.
func TestRunGraphHostileSpec(t *testing.T) {
	f := newWebFixture(t)
	f.start("h1", hostileSpec)
	f.settle("h1", waitingForSignal)
	code, _, body := f.send(req{Method: "GET", Path: "/ui/runs/h1", ReadSession: true})
	if code != 200 {
		t.Fatalf("%d", code)
	}
	svg := drawingOf(t, body)
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<b ") || !strings.Contains(svg, "&lt;/svg&gt;&lt;script&gt;") {
		t.Errorf("the drawing let markup through:\n%s", svg)
	}
	if n := strings.Count(body, "<script"); n != 1 {
		t.Errorf("the page holds %d scripts, want its own one", n)
	}
}
