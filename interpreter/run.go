package interpreter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Errors of the interpreter.
var (
	// ErrNondeterministic is returned by Replay when the spec no longer produces the decisions
	// recorded in the history (the spec text changed, or a bug): the run must not go on.
	ErrNondeterministic = errors.New("nondeterministic replay")
	// ErrClosed is returned by Apply after the run has closed.
	ErrClosed = errors.New("run is closed")
)

// Run is one run's state machine.
type Run struct {
	w    *spec.Workflow
	info runInfo
	// begun is New's WorkflowStarted payload until the run starts: its input and spec text
	// are not kept after (the engine holds the run's spec, parsed).
	begun *history.Started

	// input is the run's input decoded (inputValue), while inputDecoded. A run started from a
	// JSON input keeps that (inputJSON) and drops the decoded value when an input leaves it
	// waiting on no activity: decoded JSON takes several times the room of its text.
	input        any
	inputJSON    json.RawMessage
	inputDecoded bool
	state        map[string]any
	// runVars is what expressions read as `run`, made once (runEnv), dropped when the run
	// waits on no activity: expressions only read it.
	runVars map[string]any

	now    time.Time       // time of the input being applied
	out    []history.Event // decisions of the input being applied
	closed history.EventType

	root       *seq
	activities table[*node]     // by activity_execution_id, while scheduled
	timers     table[stepTimer] // by timer id, while scheduled
	children   table[*node]     // by step instance path (child and workflow waits)
	waiters    table[[]*node]   // by signal name
	// signals, wfTimers and signalIDs are nil until their first entry (put).
	signals map[string][]history.Signal // received and not yet applied, in order

	undo         []undoable          // completed steps with compensate_with, in completion order
	unwinding    *unwinding          // set once compensations have begun
	compensating *seq                // the compensation or on_cancel sequence running now
	wfTimers     map[string]runTimer // workflow timeout timers by id, while armed
	signalIDs    map[string]bool     // client signal ids received, for idempotent sends
	terminating  bool                // children are terminated, not cancelled
	count        int                 // events in the history so far (inputs and decisions)
	bytes        int                 // payload bytes in the history so far
	shard        *shardChild         // set in a shard child run
	infoDecoded  bool                // while ReplayDecoded runs: begun is the WorkflowStarted payload
}

// New makes the state machine of a run; nothing happens until Apply gets WorkflowStarted.
func New(w *spec.Workflow, started history.Started) *Run {
	return &Run{
		w: w, info: runInfoOf(started), begun: &started, state: map[string]any{},
	}
}

// runInfo is what a started run reads of its WorkflowStarted payload.
type runInfo struct {
	WorkflowID, RunID, SpecFile, ExecBase, TraceParent string
	Rules                                              int
}

func runInfoOf(st history.Started) runInfo {
	return runInfo{WorkflowID: st.WorkflowID, RunID: st.RunID, SpecFile: st.SpecFile, ExecBase: st.ExecBase,
		TraceParent: st.TraceParent, Rules: st.Rules}
}

// put sets m[k] to v, making the map at its first entry: a run leaves the maps of what it does
// not use (signals, workflow timeouts) nil, which reads as empty, and a waiting run in memory
// holds no empty ones.
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

// stepTimer is a step's timer while scheduled: the step and when the timer is due. A timer's
// due time lives with it and leaves with it (Pending reports it).
type stepTimer struct {
	n  *node
	at time.Time
}

// runTimer is a workflow timeout's timer while armed: its kind and when it is due.
type runTimer struct {
	kind string
	at   time.Time
}

// Closed returns the terminal event type once the run has closed, "" before.
func (r *Run) Closed() history.EventType { return r.closed }

// State returns the run's public state (read only).
func (r *Run) State() map[string]any { return r.state }

// TraceParent is the W3C trace context the run was started with, or "".
func (r *Run) TraceParent() string { return r.info.TraceParent }

// Apply feeds one input event and returns the decisions it implies, in order, without Seq.
func (r *Run) Apply(ev history.Event) ([]history.Event, error) {
	if ev.Type.Decision() {
		return nil, fmt.Errorf("apply %s: a decision is not an input", ev.Type)
	}
	if r.closed != "" {
		return nil, fmt.Errorf("apply %s: %w", ev.Type, ErrClosed)
	}
	r.now, r.out = ev.Time, nil
	switch {
	case r.count >= MaxEvents && r.root != nil:
		r.overLimit(fmt.Sprintf("the run's history reached %d events; use continue_as_new for long-lived workflows", MaxEvents))
	case r.bytes >= MaxHistoryBytes && r.root != nil:
		r.overLimit(fmt.Sprintf("the run's history reached %d MiB of payloads; use continue_as_new for long-lived workflows", MaxHistoryBytes>>20))
	default:
		if err := r.input1(ev); err != nil {
			return nil, err
		}
	}
	out := r.out
	r.out = nil
	if r.activities.len() == 0 {
		// Waiting on no activity, the run may wait long (a timer, a signal, a child): it
		// holds neither its `run` map nor its decoded input meanwhile; the next input that
		// evaluates makes them again.
		r.runVars = nil
		if r.inputJSON != nil {
			r.input, r.inputDecoded = nil, false
		}
	}
	r.count += 1 + len(out)
	r.bytes += len(ev.Data)
	for _, d := range out {
		r.bytes += len(d.Data)
	}
	return out, nil
}

func (r *Run) input1(ev history.Event) error {
	switch ev.Type {
	case history.WorkflowStarted:
		return r.start(ev)
	case history.ActivityCompleted:
		return r.activityCompleted(ev)
	case history.ActivityAttemptFailed, history.ActivityTimedOut:
		return r.attemptFailed(ev)
	case history.ActivityAttemptInterrupted:
		return r.attemptInterrupted(ev)
	case history.TimerFired:
		return r.timerFired(ev)
	case history.SignalReceived:
		return r.signalReceived(ev)
	case history.ChildWorkflowCompleted, history.ChildWorkflowFailed,
		history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
		return r.childClosed(ev)
	case history.CancelRequested:
		return r.cancelRequested(ev)
	case history.TerminateRequested:
		return r.terminate(ev)
	case history.RetryRequested:
		return r.retryRequested(ev)
	case history.ActivityHeartbeatRecorded:
		return r.heartbeat(ev)
	case history.StructuralLimitReached:
		return r.limitReached(ev)
	case history.ActivityStarted, history.RepairRequested, history.WorkflowMigrated:
		return nil // bookkeeping: no decision follows (a moved run is replayed on its new text whole)
	}
	return fmt.Errorf("apply %s: not an input event this version understands", ev.Type)
}

func (r *Run) start(ev history.Event) error {
	if r.root != nil || r.begun == nil {
		return errors.New("apply WorkflowStarted: run already started")
	}
	st := *r.begun
	if !r.infoDecoded {
		var err error
		if st, err = history.DataOf[history.Started](ev); err != nil {
			return err
		}
	}
	if st.Shard != nil {
		// No workflow timeouts of its own: the parent's end cancels it.
		r.begun = nil
		return r.startShardChild(st.Shard, st.Input)
	}
	if len(st.Input) > 0 {
		if err := json.Unmarshal(st.Input, &r.input); err != nil {
			return fmt.Errorf("apply WorkflowStarted: input: %w", err)
		}
		r.inputJSON = bytes.Clone(st.Input) // its own: the caller's bytes may be reused
	}
	r.inputDecoded = true
	r.begun = nil
	runStart := ev.Time
	if !st.RunStarted.IsZero() {
		runStart = st.RunStarted
	}
	r.armTimeouts(runStart, st.ExecutionStarted)
	r.root = &seq{r: r, steps: r.w.Steps, sc: &scope{steps: &table[any]{}}, done: r.finishRun}
	r.root.start()
	return nil
}

// finishRun closes the run when its top-level sequence ends.
func (r *Run) finishRun(_ any, f *history.Failure) {
	if r.closed != "" {
		return
	}
	if f != nil {
		if r.w.CompensateOnFailure && len(r.undo) > 0 {
			r.unwind("failure", f)
			return
		}
		r.fail(f)
		return
	}
	var out any
	if r.w.Output != nil {
		v, err := r.w.Output.Eval(r.env(r.root.sc, r.w.Output.StepRefs(), nil))
		if err != nil {
			r.fail(&history.Failure{Category: history.CategoryExpression, PropagationKind: "workflow",
				Message: "workflow output: " + err.Error(), NonRetryable: true})
			return
		}
		out = v
	}
	r.close(history.WorkflowCompleted, history.Closed{Output: mustJSON(out)})
}

func (r *Run) fail(f *history.Failure) {
	r.close(history.WorkflowFailed, history.Closed{Failure: f})
}

func (r *Run) close(typ history.EventType, c history.Closed) {
	r.disarmTimeouts()
	r.emit(history.Event{Type: typ, Data: history.MustData(c)})
	r.closed = typ
}

func (r *Run) emit(e history.Event) {
	e.Time = r.now
	r.out = append(r.out, e)
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return history.MustData(v)
}

func decodeJSON(b json.RawMessage) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if v, ok := fastValue(b); ok {
		return v, nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}
