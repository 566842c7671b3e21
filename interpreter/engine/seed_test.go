package engine

// One test per promise of the failure semantics (docs/design.md, Failures; the README's
// Failures section), on the virtual clock.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

func events(h *harness, r history.Run) []history.Event {
	evs, err := h.store.Events(r.RunID, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

func count(evs []history.Event, typ history.EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// "tries = 1 by default: the failure reaches the workflow at once."
func TestSeedDefaultTriesIsOne(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["x"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		return nil, &history.ActivityError{Message: "temporary gateway failure"}
	}
	h.start(h.write("w.wend.yaml", head+"steps: [{activity: p.x}]\n"), "w", "null")
	r := h.wait("w")
	if r.Status != history.StatusFailed || h.acts.count("x") != 1 || count(events(h, r), history.ActivityRetryScheduled) != 0 {
		t.Fatalf("status %s after %d calls", r.Status, h.acts.count("x"))
	}
}

// "tries 3, backoff [5, 30]: a failed try closes its attempt, records ActivityRetryScheduled
// and makes a durable task whose available_at comes from the backoff; the workflow keeps
// waiting and receives the exception only if the last try fails."
func TestSeedRetryScheduleAndTask(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["charge"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		return nil, &history.ActivityError{Type: "RuntimeException", Message: "temporary gateway failure"}
	}
	f := h.write("w.wend.yaml", head+"steps: [{activity: p.charge, retry: {tries: 3, backoff: [5s, 30s]}}]\n")
	h.start(f, "w", "null")
	for h.acts.count("charge") < 1 {
		time.Sleep(time.Millisecond)
	}
	// After try 1: a retry task due in 5 s with the seed's bookkeeping fields.
	var task history.Task
	for {
		ts, _ := h.store.Tasks()
		if len(ts) == 1 && ts[0].ID != "" && ts[0].AvailableAt.Equal(t0.Add(5*time.Second)) {
			task = ts[0]
			break
		}
		time.Sleep(time.Millisecond)
	}
	at, _ := history.DataOf[activityTask](history.Event{Data: task.Data})
	if at.Attempt != 2 || at.RetryAfterAttempt != 1 || at.RetryBackoffSeconds != 5 || at.RetryOfTaskID == "" || at.RetryAfterAttemptID == "" {
		t.Fatalf("retry task %+v", at)
	}
	r := h.wait("w")
	evs := events(h, r)
	if r.Status != history.StatusFailed || count(evs, history.ActivityRetryScheduled) != 2 || count(evs, history.ActivityFailed) != 1 {
		t.Fatalf("status %s, retries %d", r.Status, count(evs, history.ActivityRetryScheduled))
	}
}

// "A non-retryable exception fails the activity and resumes the workflow at once; the mark
// non_retryable = true is stored on the failure and on ActivityFailed / WorkflowFailed."
func TestSeedNonRetryableMarkIsDurable(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["pay"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		return nil, &history.ActivityError{Type: "PaymentDeclined", Message: "declined", NonRetryable: true}
	}
	h.start(h.write("w.wend.yaml", head+"steps: [{activity: p.pay, retry: {tries: 5}}]\n"), "w", "null")
	r := h.wait("w")
	evs := events(h, r)
	var af, wf history.Failure
	for _, e := range evs {
		switch e.Type {
		case history.ActivityFailed:
			x, _ := history.DataOf[history.AttemptFailure](e)
			af = x.Failure
		case history.WorkflowFailed:
			x, _ := history.DataOf[history.Closed](e)
			wf = *x.Failure
		}
	}
	if h.acts.count("pay") != 1 || !af.NonRetryable || !wf.NonRetryable || wf.Category != history.CategoryActivity {
		t.Fatalf("calls %d, ActivityFailed %+v, WorkflowFailed %+v", h.acts.count("pay"), af, wf)
	}
}

// "If you fix the cause before the tries run out, the workflow can go on to complete."
func TestSeedFixBeforeTriesRunOut(t *testing.T) {
	h := newHarness(t)
	fixed := false
	h.acts.fns["x"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		if !fixed {
			fixed = true // the deploy lands during the backoff
			return nil, &history.ActivityError{Message: "bug"}
		}
		return json.RawMessage(`"ok"`), nil
	}
	h.start(h.write("w.wend.yaml", head+"steps: [{activity: p.x, retry: {tries: 2, backoff: [1m]}}]\n"), "w", "null")
	if r := h.wait("w"); r.Status != history.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
}

// "At the deadline the engine cancels open activities and timers (ActivityCancelled,
// TimerCancelled), records a failure with failure_category timeout and propagation_kind
// timeout, WorkflowTimedOut with timeout_kind, status failed with closed_reason timed_out,
// and tells a parent waiting on the child."
func TestSeedDeadlineClosesTheRun(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["hang"] = func(ctx context.Context, _ history.ActivityCall) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h.write("child.wend.yaml", head+"timeouts: {run: 10m}\nsteps:\n  - parallel: [{activity: p.hang}, {delay: 1h}]\n")
	f := h.write("parent.wend.yaml", head+"steps: [{id: c, run_workflow: ./child.wend.yaml}]\n")
	p := h.start(f, "p", "null")
	childID := "p/" + p.RunID + "/steps[0]"
	h.exists(childID)
	child := h.wait(childID)
	evs := events(h, child)
	last := evs[len(evs)-1]
	c, _ := history.DataOf[history.Closed](last)
	if child.Status != history.StatusFailed || child.ClosedReason != history.ClosedTimedOut || last.Type != history.WorkflowTimedOut ||
		c.TimeoutKind != "run_timeout" || c.Failure.Category != history.CategoryTimeout || c.Failure.PropagationKind != "timeout" ||
		count(evs, history.ActivityCancelled) != 1 || count(evs, history.TimerCancelled) != 1 {
		t.Fatalf("child %s/%s, last %s %+v", child.Status, child.ClosedReason, last.Type, c)
	}
	parent := h.wait("p")
	if parent.Status != history.StatusFailed || count(events(h, parent), history.ChildWorkflowFailed) != 1 {
		t.Fatalf("parent %s", parent.Status)
	}
}

// "The supervisor also finds runs past their deadline that are only waiting (an activity, a
// timer) and enforces it": a deadline that passed while wend was down fires on resume.
func TestSeedDeadlinePassedWhileDown(t *testing.T) {
	h := newHarness(t)
	h.start(h.write("w.wend.yaml", head+"timeouts: {execution: 1h}\nsteps: [{wait_for_signal: never}]\n"), "w", "null")
	h.e.Close()
	h.clock.Advance(2 * time.Hour) // down past the deadline
	h.open()
	if _, err := h.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := h.wait("w")
	if r.ClosedReason != history.ClosedTimedOut {
		t.Fatalf("closed %s/%s", r.Status, r.ClosedReason)
	}
}

// "A late report from a superseded attempt does not count": its result is ignored and counted,
// and the activity_execution_id stays the same while activity_attempt_id changes.
func TestSeedLateReportOfSupersededAttemptIgnored(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	h.acts.fns["slow"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if c.Attempt == 1 {
			<-release // ignores its cancellation and reports after its try timed out
			return json.RawMessage(`"late"`), nil
		}
		return json.RawMessage(`"fresh"`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{id: s, activity: p.slow, timeout: 10s, retry: {tries: 2}}]\noutput: \"${{ steps.s.output }}\"\n")
	h.start(f, "w", "null")
	done := make(chan history.Run)
	go func() { done <- h.wait("w") }()
	r := <-done
	close(release)
	if h.output(r) != `"fresh"` {
		t.Fatalf("output %s", h.output(r))
	}
	// The late report of attempt 1 arrives after attempt 2 won; it must not be recorded.
	deadline := time.Now().Add(2 * time.Second)
	for h.e.StaleOutcomes() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if h.e.StaleOutcomes() != 1 || count(events(h, r), history.ActivityCompleted) != 1 {
		t.Fatalf("stale %d, completions %d", h.e.StaleOutcomes(), count(events(h, r), history.ActivityCompleted))
	}
}

// exists waits until a run of the workflow id has started (children start in the background).
func (h *harness) exists(id string) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if runs, _ := h.store.Runs(history.RunFilter{WorkflowID: id}); len(runs) > 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("workflow %s never started", id)
		}
		time.Sleep(time.Millisecond)
	}
}
