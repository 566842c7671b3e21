package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// failUntil answers the local sim as the fake plugin's fail activity does.
func failUntil(typ string, until int, nonRetryable bool) sim.Answer {
	return func(act string, in any, attempt int) (any, *history.Failure) {
		if act == "fail" && (until == 0 || attempt < until) {
			return nil, &history.Failure{Category: history.CategoryActivity, Type: typ, Message: "boom", NonRetryable: nonRetryable}
		}
		return in, nil
	}
}

func TestRetryBackoffList(t *testing.T) {
	src := sim.Head + `steps:
  - id: f
    activity: p.fail
    with: {type: Flaky, until: 4}
    retry: {tries: 5, backoff: [10s, 1m]}
output: "${{ steps.f.output.type }}"
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, nil, nil))
	if got := output(t, e); got != `"Flaky"` {
		t.Fatalf("output %s", got)
	}
	tries := p.triesOf("fail")
	if len(tries) != 4 {
		t.Fatalf("%d tries, want 4", len(tries))
	}
	// wend keeps the backoff list: 10s, then 1m repeating; each try waits on a Temporal timer.
	waits := []time.Duration{10 * time.Second, time.Minute, time.Minute}
	for i, w := range waits {
		if got := tries[i+1].At.Sub(tries[i].At); got != w {
			t.Errorf("wait before try %d: %s, want %s", i+2, got, w)
		}
		if tries[i+1].Call.Attempt != i+2 || tries[i+1].ActivityID != interpreter.TaskID(tries[0].Call.ActivityExecutionID, i+2) {
			t.Errorf("try %d: attempt %d, ActivityID %s", i+2, tries[i+1].Call.Attempt, tries[i+1].ActivityID)
		}
	}
	// Every try is in the history (Temporal's own retries would hide them).
	if n := len(ofType(evs, history.ActivityAttemptFailed)); n != 3 {
		t.Fatalf("%d failed attempts recorded, want 3", n)
	}
	local := sim.New(t, src, nil)
	local.RunActivities(failUntil("Flaky", 4, false))
	sameAsLocal(t, evs, local)
}

func TestRetryExponentialJitter(t *testing.T) {
	src := sim.Head + `steps:
  - id: f
    activity: p.fail
    with: {type: Flaky, until: 3}
    retry: {tries: 3, backoff: {initial: 1m, factor: 2, jitter: 0.5}}
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, nil, nil))
	output(t, e)
	retries := ofType(evs, history.ActivityRetryScheduled)
	tries := p.triesOf("fail")
	if len(retries) != 2 || len(tries) != 3 {
		t.Fatalf("%d retries, %d tries", len(retries), len(tries))
	}
	for i, r := range retries {
		rs, _ := history.DataOf[history.RetrySchedule](r)
		base := time.Minute << i
		got := time.Duration(rs.RetryBackoffSeconds * float64(time.Second))
		if got < base/2 || got > base*3/2 || got == base {
			t.Errorf("retry %d backoff %s: want a jittered %s (±50%%)", i+1, got, base)
		}
		// The next try starts when wend said, not when Temporal would have.
		if !tries[i+1].At.Equal(rs.AvailableAt) {
			t.Errorf("try %d at %s, available at %s", i+2, tries[i+1].At, rs.AvailableAt)
		}
	}
}

func TestRetryNonRetryable(t *testing.T) {
	for _, tc := range []struct {
		name, retry  string
		nonRetryable bool
	}{
		{"listed type", "retry: {tries: 5, backoff: [1s], non_retryable: [Fatal]}", false},
		{"flagged by the plugin", "retry: {tries: 5, backoff: [1s]}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := sim.Head + "steps:\n  - activity: p.fail\n    with: {type: Fatal, non_retryable: " +
				map[bool]string{true: "true", false: "false"}[tc.nonRetryable] + "}\n    " + tc.retry + "\n"
			e, p := newEnv(t)
			evs := run(t, e, startInput(src, nil, nil))
			c := wendFailure(t, e, history.WorkflowFailed)
			if len(p.triesOf("fail")) != 1 || c.Failure == nil || c.Failure.Type != "Fatal" || !c.Failure.NonRetryable {
				t.Fatalf("%d tries, failure %+v", len(p.triesOf("fail")), c.Failure)
			}
			if len(ofType(evs, history.ActivityRetryScheduled)) != 0 {
				t.Fatal("a non-retryable failure was retried")
			}
			local := sim.New(t, src, nil)
			local.RunActivities(failUntil("Fatal", 0, tc.nonRetryable))
			sameAsLocal(t, evs, local)
		})
	}
}

// TestStepTimeout: a try over the step's timeout is Temporal's start-to-close timeout,
// recorded as wend's ActivityTimedOut "timeout", and retried by wend.
func TestStepTimeout(t *testing.T) {
	src := sim.Head + `steps:
  - activity: p.hang
    timeout: 200ms
    retry: {tries: 2, backoff: [1s]}
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, nil, nil))
	c := wendFailure(t, e, history.WorkflowFailed)
	timedOut := ofType(evs, history.ActivityTimedOut)
	if len(timedOut) != 2 || len(p.triesOf("hang")) != 2 {
		t.Fatalf("%d timeouts recorded, %d tries", len(timedOut), len(p.triesOf("hang")))
	}
	af, _ := history.DataOf[history.AttemptFailure](timedOut[0])
	if af.Failure.Category != history.CategoryTimeout || af.Failure.Type != "timeout" || c.Failure.Category != history.CategoryTimeout {
		t.Fatalf("timeout failure %+v, run failure %+v", af.Failure, c.Failure)
	}
}

// TestWorkerLostIsRedelivered: the try heartbeats progress, then its worker goes silent (the
// fake beats no more, as a killed worker). Temporal's heartbeat timeout is the liveness one,
// so the driver records the try as interrupted, not failed: the run redelivers it as attempt 2
// with the last progress, although the step has one try, and the reason names what happened.
func TestWorkerLostIsRedelivered(t *testing.T) {
	shortLiveness(t)
	src := sim.Head + `steps:
  - id: h
    activity: p.hang
output: "${{ steps.h.output }}"
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, nil, nil))
	if got := output(t, e); got != `{"resumed":{"attempt":1}}` {
		t.Fatalf("output %s", got)
	}
	tries := p.triesOf("hang")
	if len(tries) != 2 || string(tries[1].Call.LastProgress) != `{"attempt":1}` {
		t.Fatalf("%d tries; second got progress %s", len(tries), tries[len(tries)-1].Call.LastProgress)
	}
	if tries[0].Call.ActivityExecutionID != tries[1].Call.ActivityExecutionID || tries[0].Call.ActivityAttemptID == tries[1].Call.ActivityAttemptID {
		t.Fatalf("redelivery: execution %s then %s, attempt ids %s then %s; want the same execution, a new attempt id",
			tries[0].Call.ActivityExecutionID, tries[1].Call.ActivityExecutionID, tries[0].Call.ActivityAttemptID, tries[1].Call.ActivityAttemptID)
	}
	var seq []history.EventType
	for _, ev := range evs {
		if ev.Attempt == 1 && ev.ActivityExecutionID != "" {
			seq = append(seq, ev.Type)
		}
	}
	want := []history.EventType{history.ActivityScheduled, history.ActivityHeartbeatRecorded, history.ActivityAttemptInterrupted, history.ActivityRetryScheduled}
	if strings.Join(types(seq), ",") != strings.Join(types(want), ",") {
		t.Fatalf("attempt 1 events %v, want %v", seq, want)
	}
	in, _ := history.DataOf[history.AttemptInterruption](ofType(evs, history.ActivityAttemptInterrupted)[0])
	if want := "the worker running attempt 1 stopped answering for " + livenessTimeout.String() + "; redelivered as attempt 2"; in.Reason != want {
		t.Fatalf("reason %q, want %q", in.Reason, want)
	}
	rs, _ := history.DataOf[history.RetrySchedule](ofType(evs, history.ActivityRetryScheduled)[0])
	if !rs.Redelivery || rs.RetryBackoffSeconds != 0 {
		t.Fatalf("retry %+v, want a redelivery due at once", rs)
	}
}

// shortLiveness lets a test's silent worker be noticed at once: the test environment's
// heartbeat timeouts run on the wall clock.
func shortLiveness(t *testing.T) {
	old := livenessTimeout
	livenessTimeout = 200 * time.Millisecond
	t.Cleanup(func() { livenessTimeout = old })
}

// TestFailureProgressToNextTry: a plugin failure's details carry the try's last progress.
func TestFailureProgressToNextTry(t *testing.T) {
	src := sim.Head + `steps:
  - activity: p.fail
    with: {type: Flaky, until: 2}
    retry: {tries: 2, backoff: [1s]}
`
	e, p := newEnv(t)
	run(t, e, startInput(src, nil, nil))
	output(t, e)
	tries := p.triesOf("fail")
	if len(tries) != 2 || string(tries[1].Call.LastProgress) != `{"failed":1}` {
		t.Fatalf("%d tries; second got progress %s", len(tries), tries[len(tries)-1].Call.LastProgress)
	}
}

func types(ts []history.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}
