package interpreter

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
)

// MaxPayloadBytes caps an activity's input and output (a structural limit: over it the step
// fails non-retryably rather than bloating the history).
const MaxPayloadBytes = 2 << 20

func (n *node) startActivity() {
	raw, ok := n.withJSON()
	if !ok {
		return
	}
	if len(raw) > MaxPayloadBytes {
		n.stepFailed(&history.Failure{Category: history.CategoryStructuralLimit, PropagationKind: "step", Type: "PayloadTooLarge",
			Message: fmt.Sprintf("activity input is %d bytes, over the %d-byte limit", len(raw), MaxPayloadBytes), NonRetryable: true})
		return
	}
	w := n.r.w
	n.retry = n.s.Retry
	if n.retry == nil {
		n.retry = w.Defaults.Retry
	}
	n.tries = 1
	if n.retry != nil {
		n.tries = n.retry.Tries
	}
	timeout, hb := n.s.Timeout.D, n.s.HeartbeatTimeout.D
	if timeout == 0 {
		timeout = w.Defaults.Timeout.D
	}
	if hb == 0 {
		hb = w.Defaults.HeartbeatTimeout.D
	}
	if msg := n.r.overPending(n.r.activities.len(), "activities"); msg != "" {
		n.stepFailed(limitFailure(msg))
		return
	}
	n.execID = n.r.execBase() + ":" + n.path
	n.attempt = 1
	n.r.activities.set(n.execID, n)
	n.sched = history.ActivitySchedule{Plugin: n.s.Plugin, Activity: n.s.Activity, Input: raw,
		Tries: n.tries, TimeoutMS: timeout.Milliseconds(), HeartbeatTimeout: hb.Milliseconds()}
	n.r.emit(history.Event{Type: history.ActivityScheduled, Step: n.path, ActivityExecutionID: n.execID, Attempt: 1,
		Data: scheduleData(n.sched)})
}

// scheduleData encodes an ActivityScheduled payload as history.MustData would, without
// json.Marshal's reflection (one a step).
func scheduleData(s history.ActivitySchedule) json.RawMessage {
	b, err := s.JSON()
	if err != nil {
		panic(fmt.Sprintf("interpreter: encode activity schedule: %v", err))
	}
	return b
}

func (r *Run) activityFor(ev history.Event) *node {
	n := r.activities.at(ev.ActivityExecutionID)
	if n == nil || n.attempt != ev.Attempt || n.state != running {
		return nil
	}
	return n
}

// LastProgress returns the latest heartbeat progress recorded for an activity execution.
func (r *Run) LastProgress(execID string) []byte {
	if n := r.activities.at(execID); n != nil {
		return n.progress
	}
	return nil
}

func (r *Run) heartbeat(ev history.Event) error {
	n := r.activityFor(ev)
	if n == nil {
		return nil
	}
	hb, err := history.DataOf[history.HeartbeatRecord](ev)
	if err != nil {
		return err
	}
	n.progress = hb.Progress
	return nil
}

// SecretPlaces returns where in an activity's input the host puts secret values: the
// references its step's `with` templates wrote, and no other text (nil: none).
func (r *Run) SecretPlaces(execID string) []history.SecretPlace {
	n := r.activities.at(execID)
	if n == nil || len(n.fills) == 0 {
		return nil
	}
	out := make([]history.SecretPlace, len(n.fills))
	for i, f := range n.fills {
		out[i] = history.SecretPlace{Path: f.Path, Name: f.Name, Offset: f.Offset}
	}
	return out
}

// Activity returns the schedule of an activity the run is waiting on.
func (r *Run) Activity(execID string) (history.ActivitySchedule, bool) {
	n := r.activities.at(execID)
	if n == nil {
		return history.ActivitySchedule{}, false
	}
	return n.sched, true
}

// Expects reports whether an outcome for this attempt would be applied: the engine drops
// (and counts) the others before recording them — a superseded attempt's result
// (docs/reliability.md G5).
func (r *Run) Expects(execID string, attempt int) bool {
	n := r.activities.at(execID)
	return n != nil && n.attempt == attempt && n.state == running
}

func (r *Run) activityCompleted(ev history.Event) error {
	n := r.activityFor(ev)
	if n == nil {
		return nil
	}
	out, err := resultOutput(ev)
	if err != nil {
		return err
	}
	r.activities.del(n.execID)
	n.complete(out)
	return nil
}

// resultOutput decodes an ActivityCompleted payload's output (history.ActivityResult's) in
// one pass: decoding the payload to a RawMessage and that again to a value read the output
// twice, the most of Apply's CPU on a step.
func resultOutput(ev history.Event) (any, error) {
	var res struct {
		Output any `json:"output"`
	}
	if len(ev.Data) == 0 {
		return nil, nil
	}
	if v, ok := fastValue(ev.Data); ok {
		if m, ok := v.(map[string]any); ok && exactOutputKey(m) {
			return m["output"], nil
		}
	}
	if err := json.Unmarshal(ev.Data, &res); err != nil {
		return nil, fmt.Errorf("%s event %d: %w", ev.Type, ev.Seq, err)
	}
	return res.Output, nil
}

// exactOutputKey reports whether m's keys name the output only as "output": encoding/json
// matches a struct's field names without regard to case, so "Output" would be the output too.
func exactOutputKey(m map[string]any) bool {
	for k := range m {
		if k != "output" && strings.EqualFold(k, "output") {
			return false
		}
	}
	return true
}

// attemptFailed decides between a retry and the activity's final failure.
func (r *Run) attemptFailed(ev history.Event) error {
	n := r.activityFor(ev)
	if n == nil {
		return nil
	}
	af, err := history.DataOf[history.AttemptFailure](ev)
	if err != nil {
		return err
	}
	f := af.Failure
	f.Step, f.ActivityExecID, f.Attempt = n.path, n.execID, n.attempt
	if f.PropagationKind == "" {
		f.PropagationKind = "activity"
	}
	if n.retry != nil && slices.Contains(n.retry.NonRetryable, f.Type) {
		f.NonRetryable = true
	}
	if f.NonRetryable || (n.tries != 0 && n.attempt-n.attemptBase >= n.tries) {
		r.activities.del(n.execID)
		r.emit(history.Event{Type: history.ActivityFailed, Step: n.path, ActivityExecutionID: n.execID, Attempt: n.attempt,
			Data: history.MustData(history.AttemptFailure{Failure: f})})
		n.fail(&f)
		return nil
	}
	r.emitRetry(n, retryWait(n, f), false)
	return nil
}

// MaxNextRetryDelay caps the wait a plugin may ask for before the next try.
const MaxNextRetryDelay = 7 * 24 * time.Hour

// retryWait is the wait before the try after failure f: the one the plugin asked for (an HTTP
// Retry-After), capped at MaxNextRetryDelay, else the step's backoff. A plugin's wait is not
// jittered: the server named the moment.
func retryWait(n *node, f history.Failure) time.Duration {
	if ms := f.NextRetryDelayMS; ms > 0 {
		return time.Duration(min(ms, MaxNextRetryDelay.Milliseconds())) * time.Millisecond
	}
	return n.backoff()
}

// attemptInterrupted redelivers a try whose process stopped before its outcome was
// recorded: the next attempt, with a new attempt id, due at once. It is not counted against
// the step's tries (attemptBase moves with it): the activity did not fail, wend stopped.
func (r *Run) attemptInterrupted(ev history.Event) error {
	n := r.activityFor(ev)
	if n == nil {
		return nil // a try already superseded: nothing owed
	}
	r.emitRetry(n, 0, true)
	n.attemptBase++
	return nil
}

// emitRetry schedules the next try of n after wait.
func (r *Run) emitRetry(n *node, wait time.Duration, redelivery bool) {
	r.emit(history.Event{Type: history.ActivityRetryScheduled, Step: n.path, ActivityExecutionID: n.execID, Attempt: n.attempt,
		Data: history.MustData(history.RetrySchedule{
			RetryOfTaskID: TaskID(n.execID, n.attempt), RetryAfterAttemptID: AttemptID(n.execID, n.attempt),
			RetryAfterAttempt: n.attempt, RetryBackoffSeconds: wait.Seconds(),
			AvailableAt: r.now.Add(wait), NextAttempt: n.attempt + 1, Redelivery: redelivery})})
	n.attempt++
	n.retryAt = r.now.Add(wait)
}

// retryRequested starts a new series of tries for the activity whose failure ended the run
// this run retries; its history up to that try was copied here.
func (r *Run) retryRequested(ev history.Event) error {
	rr, err := history.DataOf[history.RetryRequest](ev)
	if err != nil {
		return err
	}
	n := r.activities.at(rr.ActivityExecID)
	if n == nil || n.state != running {
		return fmt.Errorf("apply RetryRequested: activity %s is not waiting for a try", rr.ActivityExecID)
	}
	n.attemptBase = n.attempt
	r.emitRetry(n, 0, false)
	return nil
}

func (r *Run) execBase() string {
	if r.info.ExecBase != "" {
		return r.info.ExecBase
	}
	return r.info.RunID
}

// backoff is the wait after the current attempt, with the policy's jitter drawn from the
// execution id and attempt: the same on every replay, different across activities.
func (n *node) backoff() time.Duration {
	d := n.retry.Wait(n.attempt)
	e := n.retry.Exponential
	if e == nil || e.Jitter == 0 || d == 0 {
		return d
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s#%d", n.execID, n.attempt)
	u := float64(h.Sum64()%1_000_000)/1_000_000*2 - 1 // [-1, 1)
	if n.r.info.Rules < history.RulesMaxBoundsJitter {
		return time.Duration(float64(d) * (1 + e.Jitter*u)) // as recorded: may pass max
	}
	return jittered(d, e.Max.D, e.Jitter, u)
}

// jittered spreads wait d by the fraction j (u in [-1, 1) picks where) without passing limit
// (the policy's max; 0 for none): the spread is [d(1-j), d(1+j)), its top cut to limit when
// that is lower, so waits at the cap still differ (a clamp would send half of them at exactly
// limit, together).
func jittered(d, limit time.Duration, j, u float64) time.Duration {
	lo, hi := float64(d)*(1-j), float64(d)*(1+j)
	if limit <= 0 || hi <= float64(limit) {
		return time.Duration(float64(d) * (1 + j*u)) // the formula of the earlier rules, bit for bit
	}
	hi = max(float64(limit), lo) // d never passes limit (Retry.Wait caps it), so lo does not
	return min(time.Duration(lo+(hi-lo)*(u+1)/2), limit)
}

// TaskID names the durable task of one attempt: "<execID>#<attempt>", as fmt's "%s#%d" wrote
// it, built without fmt (one allocation: every commit and eviction check names tasks).
func TaskID(execID string, attempt int) string { return attemptName(execID, attempt) }

// AttemptID is the activity_attempt_id handed to the plugin; the same text as TaskID.
func AttemptID(execID string, attempt int) string { return attemptName(execID, attempt) }

func attemptName(execID string, attempt int) string {
	var n [20]byte
	return execID + "#" + string(strconv.AppendInt(n[:0], int64(attempt), 10))
}
