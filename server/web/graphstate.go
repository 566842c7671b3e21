package web

import (
	"fmt"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/spec/graph"
)

// The run page draws the workflow (spec/graph's layout) with each step's state on its box.
// The states come from the run's step tree (runview.Steps), its current waits and, for a
// for_each, one pass over the events that counts its items by state; the page holds the
// drawing, never the events.

// Drawing states: every step is in one of these, shown as a class (colour) and a word.
const (
	drawNone        = "none"
	drawRunning     = "running"
	drawWaiting     = "waiting"
	drawCompleted   = "completed"
	drawFailed      = "failed"
	drawCaught      = "caught"
	drawCompensated = "compensated"
	drawCancelled   = "cancelled"
)

// drawState maps a row of the step tree to its drawing state and text.
func drawState(s runview.Step) (state, text string) {
	switch s.Compensation {
	case runview.CompensationCompleted:
		return drawCompensated, "compensated"
	case runview.CompensationFailed:
		return drawFailed, "compensation failed"
	case runview.CompensationStarted:
		return drawRunning, "compensating"
	}
	switch s.Status {
	case runview.StepNone, "":
		return drawNone, "not reached"
	case runview.StepRetrying:
		return drawRunning, "running (retrying)"
	case runview.StepRunning, runview.StepWaiting, runview.StepCompleted, runview.StepFailed, runview.StepCaught, runview.StepCancelled:
		return s.Status, s.Status
	}
	return drawRunning, s.Status // a status this page does not know yet: shown as it is
}

// itemCounts are a for_each's items by drawing state, in drawOrder.
type itemCounts map[string]int

// drawOrder is the order item counts are written in: what needs a look first.
var drawOrder = []string{drawFailed, drawWaiting, drawRunning, drawCancelled, drawCaught, drawCompensated, drawCompleted}

// text is "3 items: 1 failed, 2 completed", in lines of at most lineMax characters.
func (c itemCounts) text() string {
	n := 0
	var parts []string
	for _, st := range drawOrder {
		if c[st] > 0 {
			n += c[st]
			parts = append(parts, fmt.Sprintf("%d %s", c[st], st))
		}
	}
	word := "items"
	if n == 1 {
		word = "item"
	}
	lines := []string{fmt.Sprintf("%d %s:", n, word)}
	for i, p := range parts {
		if i < len(parts)-1 {
			p += ","
		}
		if last := &lines[len(lines)-1]; len(*last)+1+len(p) <= lineMax {
			*last += " " + p
		} else {
			lines = append(lines, p)
		}
	}
	return strings.Join(lines, "\n")
}

// lineMax keeps a state line inside the drawing's label width.
const lineMax = 40

// eventDraw is the state an event leaves its step instance in ("" for none).
var eventDraw = map[history.EventType]string{
	history.ActivityScheduled: drawRunning, history.ActivityStarted: drawRunning, history.ActivityRetryScheduled: drawRunning,
	history.ChildWorkflowScheduled: drawRunning, history.WorkflowWaitScheduled: drawRunning,
	history.TimerScheduled:    drawWaiting,
	history.ActivityCompleted: drawCompleted, history.TimerFired: drawCompleted, history.SignalApplied: drawCompleted,
	history.ChildWorkflowCompleted: drawCompleted, history.WorkflowWaitCompleted: drawCompleted,
	history.ActivityFailed: drawFailed, history.StepFailed: drawFailed, history.ChildWorkflowFailed: drawFailed,
	history.WorkflowWaitFailed: drawFailed, history.ActivityCancelled: drawCancelled,
	history.CompensationCompleted: drawCompensated, history.CompensationFailed: drawFailed,
}

// drawRank orders states by what an item shows when its steps differ.
var drawRank = map[string]int{drawFailed: 8, drawWaiting: 7, drawRunning: 6, drawCancelled: 5, drawCaught: 4, drawCompensated: 3, drawCompleted: 2, drawNone: 0}

func drawDone(s string) bool {
	return s == drawCompleted || s == drawFailed || s == drawCancelled || s == drawCaught || s == drawCompensated
}

// loopItems counts each for_each's items by state, keyed by the for_each's static path. An
// item is one "@N" instance of the loop; its state is the worst of its step instances' (a
// failure a catch handled counts as caught), or waiting while the run waits inside it for a
// signal, a timer or another workflow (running while an activity's try runs or is due).
func loopItems(events []history.Event, caught map[uint64]bool, waits []runview.Wait) map[string]itemCounts {
	inst := loopInstances{}
	inst.fold(events, caught)
	return inst.counts(waits)
}

// loopInstances are the states of the step instances inside loops (step instance path ->
// its state) as their events say, before the waits; folded one event at a time, so a run's
// next version folds only its new events into a copy.
type loopInstances map[string]string

// fold reads each event once; caught are the seqs of the failures a catch handled.
func (inst loopInstances) fold(events []history.Event, caught map[uint64]bool) {
	for _, ev := range events {
		if ev.Step == "" || !strings.Contains(ev.Step, "@") {
			continue
		}
		next := eventDraw[ev.Type]
		if next == "" {
			if _, seen := inst[ev.Step]; !seen {
				inst[ev.Step] = drawRunning // begun, no event yet says how far
			}
			continue
		}
		if next == drawFailed && caught[ev.Seq] {
			next = drawCaught
		}
		cur := inst[ev.Step]
		if drawDone(cur) && next != drawFailed && next != drawCompensated {
			continue // a late timer cancel or event is bookkeeping
		}
		inst[ev.Step] = next
	}
}

// counts are the loops' items by state, the waits inside them now counted as they say.
func (inst loopInstances) counts(waits []runview.Wait) map[string]itemCounts {
	now := map[string]string{} // the instances a wait is at
	for _, w := range waits {
		if strings.Contains(w.Step, "@") {
			if w.Kind == runview.WaitActivity {
				now[w.Step] = drawRunning // a try runs or is due: the item runs
			} else {
				now[w.Step] = drawWaiting
			}
		}
	}
	items := map[string]string{} // item path (…@N) -> its state
	add := func(path, st string) {
		for i := 0; i < len(path); i++ {
			if path[i] != '@' {
				continue
			}
			end := i + 1
			for end < len(path) && path[end] >= '0' && path[end] <= '9' {
				end++
			}
			item := path[:end]
			if cur, ok := items[item]; !ok || drawRank[st] > drawRank[cur] {
				items[item] = st
			}
		}
	}
	for path, st := range inst {
		if w, ok := now[path]; ok {
			st = w
		}
		add(path, st)
	}
	for path, st := range now {
		if _, ok := inst[path]; !ok {
			add(path, st)
		}
	}
	out := map[string]itemCounts{}
	for item, st := range items {
		loop := runview.StaticPath(item[:strings.LastIndexByte(item, '@')])
		if out[loop] == nil {
			out[loop] = itemCounts{}
		}
		out[loop][st]++
	}
	return out
}

// stepMarks are the drawing's marks: each step's state from the step tree, a for_each's
// item counts, the steps the run waits at now highlighted and named by what they wait for,
// and each box linked by href to the step's detail.
func stepMarks(steps []runview.Step, waits []runview.Wait, loops map[string]itemCounts, href func(path string) string) map[string]graph.Mark {
	marks := make(map[string]graph.Mark, len(steps))
	for _, s := range steps {
		state, text := drawState(s)
		if c := loops[s.Path]; s.Kind == "for_each" && len(c) > 0 {
			text = text + "\n" + c.text()
		}
		marks[s.Path] = graph.Mark{State: state, Text: text, Href: href(s.Path)}
	}
	named := map[string]bool{}
	for _, w := range waits {
		p := runview.StaticPath(w.Step)
		m, ok := marks[p]
		if !ok {
			continue
		}
		m.Current = true
		if what := waitWhat(w); what != "" && !named[p] {
			named[p] = true
			m.Text += "\n" + what
		}
		marks[p] = m
	}
	return marks
}

// waitWhat is what a current wait waits for, in a few words for the step's box.
func waitWhat(w runview.Wait) string {
	switch w.Kind {
	case runview.WaitSignal:
		return "the run waits here" // the box's label names the signal
	case runview.WaitTimer:
		if !w.Until.IsZero() {
			return "until " + w.Until.UTC().Format("15:04:05")
		}
	case runview.WaitChild, runview.WaitWorkflow:
		return "for " + w.WorkflowID
	}
	return ""
}
