package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
)

// How a generated loop item ends: its first activity completes (then its second does),
// fails for good, runs still, backs off before a second try, or is cancelled.
const (
	itemCompleted = "completed"
	itemFailed    = "failed"
	itemRunning   = "running"
	itemRetrying  = "retrying"
	itemCancelled = "cancelled"
)

// genRun generates the history of an open run: plain activity steps s0.. that completed,
// then a for_each "each" of two activity steps (a, b) with one item per entry of items,
// ending as the entry says. The fold reads it as the interpreter would have written it.
func genRun(plain int, items []string) (history.Run, []history.Event) {
	var src strings.Builder
	src.WriteString("wend: v1\nname: gen\nplugins: {demo: ./demo}\nsteps:\n")
	for i := range plain {
		fmt.Fprintf(&src, "  - {id: s%d, activity: demo.echo, with: {n: %d}}\n", i, i)
	}
	src.WriteString("  - id: each\n    for_each: \"${{ input.items }}\"\n    steps:\n      - {id: a, activity: demo.echo, with: {x: 1}}\n      - {id: b, activity: demo.echo, with: {x: 2}}\n")
	run := history.Run{WorkflowID: "gen", RunID: "0123456789abcdef", Name: "gen", Status: history.StatusRunning, SpecFile: "gen.wend.yaml"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run.StartedAt = t0
	var evs []history.Event
	add := func(typ history.EventType, step, exec string, attempt int, data any) {
		var raw json.RawMessage
		if data != nil {
			raw, _ = json.Marshal(data)
		}
		evs = append(evs, history.Event{Seq: uint64(len(evs) + 1), Time: t0.Add(time.Duration(len(evs)) * time.Millisecond),
			Type: typ, Step: step, ActivityExecutionID: exec, Attempt: attempt, Data: raw})
	}
	add(history.WorkflowStarted, "", "", 0, history.Started{WorkflowID: run.WorkflowID, RunID: run.RunID, SpecFile: run.SpecFile,
		SpecSource: src.String(), Input: json.RawMessage(`{}`)})
	fail := func(step string, attempt int) history.AttemptFailure {
		return history.AttemptFailure{Failure: history.Failure{Category: "activity", PropagationKind: "activity", Message: "boom", Step: step, Attempt: attempt}}
	}
	act := func(step, end string) {
		exec := run.RunID + ":" + step
		add(history.ActivityScheduled, step, exec, 1, history.ActivitySchedule{Plugin: "demo", Activity: "echo", Input: json.RawMessage(`{"x":1}`), Tries: 2})
		add(history.ActivityStarted, step, exec, 1, nil)
		switch end {
		case itemCompleted:
			add(history.ActivityCompleted, step, exec, 1, history.ActivityResult{Output: json.RawMessage(`{"x":1}`)})
		case itemFailed:
			add(history.ActivityFailed, step, exec, 1, fail(step, 1))
		case itemRetrying:
			add(history.ActivityAttemptFailed, step, exec, 1, fail(step, 1))
			add(history.ActivityRetryScheduled, step, exec, 1, history.RetrySchedule{RetryAfterAttempt: 1, NextAttempt: 2,
				RetryBackoffSeconds: 60, AvailableAt: t0.Add(time.Hour)})
		case itemCancelled:
			add(history.ActivityCancelled, step, exec, 1, nil)
		}
	}
	for i := range plain {
		act(fmt.Sprintf("steps[%d]", i), itemCompleted)
	}
	for i, end := range items {
		act(fmt.Sprintf("steps[%d]@%d.steps[0]", plain, i), end)
		if end == itemCompleted {
			act(fmt.Sprintf("steps[%d]@%d.steps[1]", plain, i), itemCompleted)
		}
	}
	run.LastSeq = uint64(len(evs))
	return run, evs
}
