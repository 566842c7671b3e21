package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

const loopSpec = `wend: v1
name: pack
plugins: {p: ./p}
steps:
  - id: pack
    for_each: "${{ input.items }}"
    concurrency: 4
    steps:
      - activity: p.weigh
      - {id: label, activity: p.label}
`

// fakeClock is a progress clock a test advances by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// loopEvents are the events of a run of loopSpec over n items, 4 at a time, each item's two
// activities taking step each; fail lists items whose label fails for good.
func loopEvents(t *testing.T, n int, fail map[int]bool) []history.Event {
	t.Helper()
	items := make([]int, n)
	input, _ := json.Marshal(map[string]any{"items": items})
	data, err := json.Marshal(history.Started{SpecFile: "pack.wend.yaml", SpecSource: loopSpec, RunID: "r1", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	evs := []history.Event{{Type: history.WorkflowStarted, Data: data}}
	sched := func(step, act string) history.Event {
		return history.Event{Type: history.ActivityScheduled, Step: step, Data: []byte(`{"plugin":"p","activity":"` + act + `"}`)}
	}
	for i := range n {
		item := fmt.Sprintf("steps[0]@%d", i)
		evs = append(evs, sched(item+".steps[0]", "weigh"),
			history.Event{Type: history.ActivityCompleted, Step: item + ".steps[0]", Attempt: 1},
			sched(item+".steps[1]", "label"))
		if fail[i] {
			f, _ := json.Marshal(history.AttemptFailure{Failure: history.Failure{Message: "no label", Category: history.CategoryActivity, NonRetryable: true}})
			evs = append(evs, history.Event{Type: history.ActivityFailed, Step: item + ".steps[1]", Attempt: 1, Data: f})
			continue
		}
		evs = append(evs, history.Event{Type: history.ActivityCompleted, Step: item + ".steps[1]", Attempt: 1})
	}
	return append(evs, history.Event{Type: history.WorkflowCompleted, Data: []byte(`{}`)})
}

// runProgress feeds evs to a progress on a fake clock that advances step per event.
func runProgress(evs []history.Event, tty bool, step time.Duration) string {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	p := &progress{w: &buf, tty: tty, start: clk.t, now: clk.now}
	for _, ev := range evs {
		p.observe(history.Run{WorkflowID: "w", RunID: "r1"}, ev)
		clk.t = clk.t.Add(step)
	}
	return buf.String()
}

// TestProgressLongForEach: 300 items off a terminal printed 604 lines, a line per
// event; now a summary every 5 s and at the end. On a terminal, one line rewritten in place
// with done/total, running, failed, rate and time left.
func TestProgressLongForEach(t *testing.T) {
	evs := loopEvents(t, 300, map[int]bool{7: true})
	// 1,202 events 25 ms apart: about 30 s.
	plain := runProgress(evs, false, 25*time.Millisecond)
	if n := strings.Count(plain, "\n"); n > 12 {
		t.Errorf("off a terminal: %d lines for 300 items", n)
	}
	if strings.Contains(plain, "\r") {
		t.Error("off a terminal: carriage returns")
	}
	goldenFile(t, "progress/loop-plain.txt", []byte(plain))

	term := runProgress(evs, true, 25*time.Millisecond)
	// started, the loop line ended by the failure's, the failure, the loop line, completed
	if n := strings.Count(term, "\n"); n != 5 {
		t.Errorf("on a terminal: %d lines, want 5:\n%s", n, term)
	}
	// The golden file keeps each redraw on a line of its own, every 50th of them.
	var kept []string
	for i, frame := range strings.Split(term, "\r") {
		if i%50 == 0 || strings.Contains(frame, "\n") {
			kept = append(kept, frame)
		}
	}
	// ⏎ marks a carriage return, ⌫ the erase to the end of the line.
	goldenFile(t, "progress/loop-terminal.txt", []byte(strings.ReplaceAll(strings.Join(kept, "⏎\n"), "\x1b[K", "⌫")))
	if !strings.Contains(term, "pack for_each: 299/300 items done, 0 running, 1 failed") {
		t.Errorf("final count missing:\n%s", term[max(0, len(term)-400):])
	}
}

// TestProgressForEachUnknownTotal: items from state cannot be counted before they run; the
// loop line says how many are done, without a total or an estimate. Without the spec (a run
// followed from the middle) activities are counted, and the line says so.
func TestProgressForEachUnknownTotal(t *testing.T) {
	evs := loopEvents(t, 3, nil)
	st, _ := history.DataOf[history.Started](evs[0])
	st.SpecSource = strings.Replace(loopSpec, "input.items", "state.items", 1)
	evs[0].Data, _ = json.Marshal(st)
	out := runProgress(evs, false, 2*time.Second)
	if !strings.Contains(out, "pack for_each: 3 items done, 0 running, 0 failed, ") || strings.Contains(out, "ETA") {
		t.Errorf("unknown total:\n%s", out)
	}
	out = runProgress(evs[1:], false, 2*time.Second)
	if !strings.Contains(out, "step 1 for_each: 6 activities done, 0 running, 0 failed") {
		t.Errorf("no spec:\n%s", out)
	}
}

// TestProgressLoadsEachSpecOnce: wend serve printed its step lines from a fresh load
// of the run's spec at every start; runs of one text now share one load, another text (or
// file) gets its own, and a text that does not load leaves the run's steps named by place.
func TestProgressLoadsEachSpecOnce(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	started := func(runID, file, src string) {
		data, err := json.Marshal(history.Started{SpecFile: file, SpecSource: src, RunID: runID, Input: json.RawMessage(`{"items":[1]}`)})
		if err != nil {
			t.Fatal(err)
		}
		p.observe(history.Run{WorkflowID: "w-" + runID, RunID: runID}, history.Event{Type: history.WorkflowStarted, Data: data})
	}
	started("r1", "pack.wend.yaml", loopSpec)
	started("r2", "pack.wend.yaml", loopSpec)
	started("r3", "other.wend.yaml", loopSpec)
	started("r4", "pack.wend.yaml", "wend: v1\nname: broken\nsteps: [{nope: 1}]\n")
	r1, r2, r3, r4 := p.runs["r1"], p.runs["r2"], p.runs["r3"], p.runs["r4"]
	if r1.w == nil || r1.w != r2.w {
		t.Fatalf("two runs of one text: specs %p and %p, want one shared load", r1.w, r2.w)
	}
	if r3.w == nil || r3.w == r1.w {
		t.Fatalf("another file: spec %p, want its own load (first %p)", r3.w, r1.w)
	}
	if r4.w != nil || len(r4.ids) != 0 {
		t.Fatalf("a text that does not load: spec %p, ids %v; want none", r4.w, r4.ids)
	}
	if r1.ids["steps[0]"] != "pack" || string(r2.input) != `{"items":[1]}` {
		t.Fatalf("ids %v, input %s", r1.ids, r2.input)
	}
	if r1.specNames != r2.specNames {
		t.Fatalf("two runs of one text keep their own step ids (%p, %p), want them shared", r1.specNames, r2.specNames)
	}
	// A spec without a for_each needs no input for a loop's total: its runs do not keep it.
	started("r5", "plain.wend.yaml", "wend: v1\nname: plain\nplugins: {p: ./p}\nsteps:\n  - {id: wait, activity: p.weigh}\n")
	if r5 := p.runs["r5"]; r5.w == nil || r5.ids["steps[0]"] != "wait" || r5.input != nil {
		t.Fatalf("a spec without a for_each: spec %p, ids %v, input %s; want its ids and no input", r5.w, r5.ids, r5.input)
	}
}

// gateWriter blocks every Write until the test opens the gate.
type gateWriter struct {
	entered chan struct{} // gets a value when a Write starts
	gate    chan struct{} // closed to let the writes through
	buf     bytes.Buffer
}

func (g *gateWriter) Write(b []byte) (int, error) {
	g.entered <- struct{}{}
	<-g.gate
	return g.buf.Write(b)
}

// TestProgressBackground: wend serve's Observe ran the step line's formatting and its
// write to stderr inside the engine's commit path, holding the run's next step; in the
// background, observe returns while the writer is still busy, and the lines come out as
// they would in line, in order.
func TestProgressBackground(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	evs := []history.Event{
		{Type: history.ActivityScheduled, Step: "steps[0]", Data: []byte(`{"plugin":"p","activity":"a"}`)},
		{Type: history.ActivityCompleted, Step: "steps[0]", Attempt: 1},
		{Type: history.ActivityScheduled, Step: "steps[1]", Data: []byte(`{"plugin":"p","activity":"b"}`)},
		{Type: history.ActivityCompleted, Step: "steps[1]", Attempt: 1},
	}
	var inline bytes.Buffer
	p := &progress{w: &inline, start: clk.t, now: clk.now}
	for _, ev := range evs {
		p.observe(history.Run{WorkflowID: "w", RunID: "r1"}, ev)
	}

	g := &gateWriter{entered: make(chan struct{}, len(evs)), gate: make(chan struct{})}
	bg := &progress{w: g, start: clk.t, now: clk.now}
	stop := bg.background()
	bg.observe(history.Run{WorkflowID: "w", RunID: "r1"}, evs[0])
	<-g.entered // the printer is writing the first line, and blocked there
	for _, ev := range evs[1:] {
		bg.observe(history.Run{WorkflowID: "w", RunID: "r1"}, ev) // returns: the printer holds the wait
	}
	close(g.gate)
	stop()
	if g.buf.String() != inline.String() || strings.Count(inline.String(), "\n") != len(evs) {
		t.Fatalf("background printed\n%s\nin line\n%s", g.buf.String(), inline.String())
	}
}

// TestLoopTotalOfARange: a for_each over a range (0..24, a []int) has a total as a list has;
// it showed none, and a sharded loop's line never said how far it had come.
func TestLoopTotalOfARange(t *testing.T) {
	for _, tc := range []struct {
		expr, input string
		want        int
	}{
		{"${{ 0..24 }}", `{}`, 25},
		{"${{ input.items }}", `{"items": [1, 2, 3]}`, 3},
		{"${{ input.n }}", `{"n": 3}`, -1},
		{"${{ state.xs }}", `{}`, -1},
	} {
		w, ds := spec.Load("t.wend.yaml", []byte("wend: v1\nname: t\nplugins: {p: ./p}\nsteps:\n  - for_each: \""+tc.expr+"\"\n    steps: [{activity: p.x}]\n"))
		if ds.HasErrors() {
			t.Fatal(ds.Error())
		}
		if got := loopTotal(w.Steps[0].ForEach, json.RawMessage(tc.input)); got != tc.want {
			t.Errorf("%s over %s: total %d, want %d", tc.expr, tc.input, got, tc.want)
		}
	}
}

// TestProgressActivityCountNeverNegative: followed from after an activity's scheduling, or
// reading events again (as after a store recovered from a full disk), the activity count
// takes each activity's end once and never shows a negative number running.
func TestProgressActivityCountNeverNegative(t *testing.T) {
	evs := loopEvents(t, 3, nil)
	body := evs[2 : len(evs)-1] // from item 0's first completion, without the run's start or end
	again := append(append(append([]history.Event{}, body...), body[:4]...), evs[len(evs)-1])
	out := runProgress(again, false, 2*time.Second)
	if strings.Contains(out, "-1 running") || !strings.Contains(out, "step 1 for_each: 6 activities done, 0 running, 0 failed") {
		t.Errorf("activity count:\n%s", out)
	}
}

// A run that ended leaves nothing behind in progress (a long-running server saw every run it
// ever started): its names and its loop's count go with its last line, which still names its
// steps and shows its loop's last count; a run still open keeps its names.
func TestProgressForgetsEndedRuns(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	evs := loopEvents(t, 3, nil)
	p.observe(history.Run{WorkflowID: "open", RunID: "r2"}, evs[0])
	for _, ev := range evs {
		p.observe(history.Run{WorkflowID: "w", RunID: "r1"}, ev)
	}
	if _, kept := p.runs["r1"]; kept || len(p.loops) != 0 || len(p.order) != 0 {
		t.Fatalf("after r1 completed: names kept %v, loops %v, order %v; want none", kept, p.loops, p.order)
	}
	if p.runs["r2"] == nil || p.runs["r2"].ids["steps[0]"] != "pack" {
		t.Fatalf("an open run's names went: %+v", p.runs["r2"])
	}
	if out := buf.String(); !strings.Contains(out, "pack for_each: 3/3 items done") || !strings.Contains(out, "w WorkflowCompleted") {
		t.Fatalf("an ended run's last lines:\n%s", out)
	}
}
