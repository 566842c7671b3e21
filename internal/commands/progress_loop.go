package commands

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/spec"
)

// summaryEvery is how often a for_each's summary line is repeated off a terminal.
const summaryEvery = 5 * time.Second

// loopCount is what progress shows of one for_each (keyed by run and the loop's path): items
// done, running and failed out of the total, the rate and an estimate of the time left.
//
// An item is done when the loop body's last step completes in it. Where that cannot be told
// from events (the body ends in a parallel, steps or for_each, or the spec is unknown) the
// count is of activities instead, and says so.
type loopCount struct {
	name  string
	last  string // static path of the body's last step when it is a leaf, "" to count activities
	total int    // items, -1 when not known before they run
	items map[string]int8

	done, running, failed int
	first, shown          time.Time
	dirty                 bool // counts changed since the last line off a terminal
}

const (
	itemRunning int8 = iota
	itemDone
	itemFailed
)

// newLoop sets up the count for the for_each at static path loop of run's spec (nil if
// unknown). The total is known when the items are a literal list or an expression of the
// run's input alone.
func newLoop(name, loop string, w *spec.Workflow, input json.RawMessage) *loopCount {
	c := &loopCount{name: name, total: -1, items: map[string]int8{}}
	var s *spec.Step
	if w != nil {
		w.Walk(func(x *spec.Step) {
			if x.Path == loop {
				s = x
			}
		})
	}
	if s == nil || s.Kind != spec.KindForEach || len(s.Steps) == 0 {
		return c
	}
	if lastStep := s.Steps[len(s.Steps)-1]; runview.LeafKind(lastStep.Kind) {
		c.last = strings.TrimPrefix(lastStep.Path, s.Path+".")
	}
	c.total = loopTotal(s.ForEach, input)
	return c
}

// loopTotal is the number of items of a for_each, evaluated against the run's input only;
// -1 when the expression needs more (state, steps, an outer item) or gives no list.
func loopTotal(v *spec.Value, input json.RawMessage) (n int) {
	defer func() {
		if recover() != nil {
			n = -1
		}
	}()
	var in any
	if len(input) > 0 && json.Unmarshal(input, &in) != nil {
		return -1
	}
	x, err := v.Eval(map[string]any{"input": in})
	// A range (0..24) gives []int, a list []any: for_each takes any slice.
	if err != nil || x == nil || reflect.TypeOf(x).Kind() != reflect.Slice {
		return -1
	}
	return reflect.ValueOf(x).Len()
}

// count applies an event of the loop at item path item ("steps[1]@4") with the rest of its
// step path below the item; it reports whether the event is one the count stands for (the
// rest keep their own lines).
func (c *loopCount) count(ev history.Event, item, rest string, now time.Time) bool {
	if c.first.IsZero() {
		c.first = now
	}
	if c.last == "" {
		return c.countActivity(ev, item+"."+rest)
	}
	st, seen := c.items[item]
	if !seen {
		c.items[item] = itemRunning
		c.running++
		c.dirty = true
	}
	switch ev.Type {
	case history.ActivityFailed, history.StepFailed, history.ChildWorkflowFailed, history.WorkflowWaitFailed:
		if st == itemRunning {
			c.items[item] = itemFailed
			c.running--
			c.failed++
			c.dirty = true
		}
		return false // failures keep their own lines
	case history.ActivityAttemptFailed, history.ActivityTimedOut:
		return false
	case history.ActivityCompleted, history.TimerFired, history.SignalApplied, history.ChildWorkflowCompleted, history.WorkflowWaitCompleted:
		if st == itemRunning && runview.StaticPath(rest) == c.last {
			c.items[item] = itemDone
			c.running--
			c.done++
			c.dirty = true
		}
	}
	return true
}

// countActivity counts by activity (its item and step path): an event for one whose scheduling
// was not seen (a run followed from the middle, events read again after a store recovered) is
// counted once, never taken off running it was not added to.
func (c *loopCount) countActivity(ev history.Event, key string) bool {
	st, seen := c.items[key]
	switch ev.Type {
	case history.ActivityScheduled:
		if !seen {
			c.items[key] = itemRunning
			c.running++
		}
	case history.ActivityCompleted:
		c.finish(key, st, seen, itemDone)
	case history.ActivityFailed:
		c.finish(key, st, seen, itemFailed)
		c.dirty = true
		return false
	case history.ActivityRetryScheduled, history.TimerScheduled, history.TimerFired, history.SignalApplied:
	default:
		return false
	}
	c.dirty = true
	return true
}

// finish ends the activity at key as end (itemDone or itemFailed), once.
func (c *loopCount) finish(key string, st int8, seen bool, end int8) {
	if seen && st != itemRunning {
		return // its end was counted already
	}
	if seen {
		c.running--
	}
	c.items[key] = end
	if end == itemDone {
		c.done++
	} else {
		c.failed++
	}
}

// finished reports whether every item is done or failed.
func (c *loopCount) finished() bool {
	return c.total >= 0 && c.last != "" && c.done+c.failed >= c.total
}

// text is the loop's summary: "pack for_each: 120/300 items done, 4 running, 2 failed,
// 9.8/s, ETA 18s".
func (c *loopCount) text(now time.Time) string {
	unit := "items"
	if c.last == "" {
		unit = "activities"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for_each: %d", c.name, c.done)
	if c.total >= 0 && c.last != "" {
		fmt.Fprintf(&b, "/%d", c.total)
	}
	fmt.Fprintf(&b, " %s done, %d running, %d failed", unit, c.running, c.failed)
	if el := now.Sub(c.first); el >= time.Second && c.done > 0 {
		rate := float64(c.done) / el.Seconds()
		fmt.Fprintf(&b, ", %.1f/s", rate)
		if c.total >= 0 && c.last != "" {
			left := c.total - c.done - c.failed
			eta := time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second)
			fmt.Fprintf(&b, ", ETA %s", eta)
		}
	}
	return b.String()
}
