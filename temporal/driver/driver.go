package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Registry is the part of a Temporal worker (or test environment) the driver registers on.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// Register registers Workflow as wire.WorkflowType, with no traces (RegisterWith).
func Register(r Registry) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: wire.WorkflowType})
}

// driver is one wend run hosted in a workflow execution.
type driver struct {
	root workflow.Context // the workflow's own context: Done when Temporal cancels the run
	ctx  workflow.Context // disconnected from root: every command goes on it

	in   wire.StartInput
	opts Options
	st   history.Started
	w    *spec.Workflow
	r    *interpreter.Run

	events []history.Event
	inbox  workflow.Channel // inputs from the coroutines that wait on Temporal
	queue  []history.Event  // inputs known at once (a timer already due), taken before inbox

	cancels   map[string]workflow.CancelFunc          // per command key (see key helpers)
	awaiting  []string                                // steps with a child or wait open, in start order (never a map walk)
	children  map[string]workflow.ChildWorkflowFuture // running children by step path
	cancelled []workflow.ChildWorkflowFuture          // children cancelled with the run, awaited before it closes
	specs     map[string]*spec.Workflow               // child specs already checked, by file
	acts      int                                     // activities Temporal holds open for this run
	warned    map[string]bool
	search    searchKept    // the search attributes set on the execution
	verdicts  []keptVerdict // the newest migrations' verdicts (migrate.go)
	spans     Spans         // the run's span recorder, when the worker exports traces (spans.go)
}

// Workflow hosts one wend run: in.Started is its WorkflowStarted payload.
func Workflow(ctx workflow.Context, in wire.StartInput) (json.RawMessage, error) {
	return host(ctx, in, Options{})
}

// host hosts one wend run, configured by o.
func host(ctx workflow.Context, in wire.StartInput, o Options) (json.RawMessage, error) {
	d, err := newDriver(ctx, in, o)
	if err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, wire.QueryEvents, d.query); err != nil {
		return nil, err
	}
	d.listen()
	if err := d.listenMigrations(); err != nil {
		return nil, err
	}
	if len(in.Prefix) > 0 {
		if err := d.resume(); err != nil {
			return nil, err
		}
	} else {
		d.apply(history.Event{Type: history.WorkflowStarted, Data: history.MustData(d.st)})
	}
	d.keepSearch()
	for d.r.Closed() == "" {
		if msg := d.overLimit(); msg != "" {
			d.apply(history.Event{Type: history.StructuralLimitReached, Data: history.MustData(history.LimitReached{Message: msg})})
			continue
		}
		var ev history.Event
		if len(d.queue) > 0 {
			ev, d.queue = d.queue[0], d.queue[1:]
		} else {
			d.inbox.Receive(d.ctx, &ev)
		}
		d.apply(ev)
		d.keepSearch()
	}
	d.awaitCancelledChildren()
	d.recordReason()
	return d.result()
}

func newDriver(ctx workflow.Context, in wire.StartInput, o Options) (*driver, error) {
	info := workflow.GetInfo(ctx)
	st := in.Started
	st.WorkflowID, st.RunID = info.WorkflowExecution.ID, info.WorkflowExecution.RunID
	if st.ExecutionStarted.IsZero() { // a first run; continue-as-new carries it on
		st.ExecutionStarted = info.WorkflowStartTime.UTC()
	}
	if st.SpecSHA256 == "" {
		sum := sha256.Sum256([]byte(st.SpecSource))
		st.SpecSHA256 = hex.EncodeToString(sum[:])
	}
	// Children are checked when they start, from the text in in.Specs: a workflow never
	// reads files.
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if w == nil || ds.HasErrors() {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("wend: workflow %s is invalid: %s", st.SpecFile, ds.Error()), "InvalidSpec", nil)
	}
	// A shard child's input is its slice (history.ShardInput), not the workflow's input.
	if st.Shard == nil {
		var err error
		if st.Input, err = checkInput(w, st.Input); err != nil {
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("wend: workflow %s: %v", st.SpecFile, err), "InvalidInput", nil)
		}
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	return &driver{root: ctx, ctx: dctx, in: in, opts: o, st: st, w: w, r: interpreter.New(w, st),
		inbox: workflow.NewChannel(dctx), cancels: map[string]workflow.CancelFunc{},
		children: map[string]workflow.ChildWorkflowFuture{}, specs: map[string]*spec.Workflow{},
		warned: map[string]bool{}}, nil
}

// listen turns wend signals and Temporal's cancel into inputs.
func (d *driver) listen() {
	// One channel for every wend signal name keeps their arrival order across names.
	sig := workflow.GetSignalChannel(d.root, wire.SignalName)
	workflow.Go(d.ctx, func(gctx workflow.Context) {
		for {
			var s wire.Signal
			sig.Receive(gctx, &s)
			d.inbox.Send(gctx, history.Event{Type: history.SignalReceived,
				Data: history.MustData(history.Signal{Name: s.Name, Data: s.Data, SignalID: s.SignalID})})
		}
	})
	workflow.Go(d.ctx, func(gctx workflow.Context) {
		d.root.Done().Receive(gctx, nil)
		d.inbox.Send(gctx, history.Event{Type: history.CancelRequested,
			Data: history.MustData(history.CancelRequest{Reason: d.cancelReason()})})
	})
}

// cancelReason is the reason of the last wire.CancelSignalName signal: Temporal's cancel
// carries none, so a client sends the reason first. The signal was delivered before the
// cancel, so it is in the channel by now.
func (d *driver) cancelReason() string {
	reason := "cancel requested through Temporal"
	ch := workflow.GetSignalChannel(d.root, wire.CancelSignalName)
	for {
		var c wire.Cancel
		if !ch.ReceiveAsync(&c) {
			return reason
		}
		if c.Reason != "" {
			reason = c.Reason
		}
	}
}

// apply feeds one input to the interpreter, records it with its decisions and acts on them.
func (d *driver) apply(ev history.Event) {
	switch {
	case ev.Type == migrateInput:
		d.migrate(ev)
		return
	case ev.Type == history.SignalReceived:
		if s, _ := history.DataOf[history.Signal](ev); d.r.SeenSignal(s.SignalID) {
			return // a resend of a signal already recorded
		}
	case isAttemptInput(ev.Type) && !d.r.Expects(ev.ActivityExecutionID, ev.Attempt):
		return // a superseded or cancelled attempt's report: never recorded
	case isChildOutcome(ev.Type) && !d.r.Awaits(ev.Step):
		return // the step stopped waiting (cancelled or timed out)
	}
	for _, dec := range d.record(ev) {
		d.effect(dec)
	}
	d.dropStale()
}

// record feeds one input to the interpreter and records it with its decisions, which it
// returns for the caller to act on.
func (d *driver) record(ev history.Event) []history.Event {
	ev.Time = workflow.Now(d.ctx).UTC()
	ev.Seq = uint64(len(d.events) + 1)
	out, err := d.r.Apply(ev)
	if err != nil {
		// The interpreter refused its own kind of input: a bug, or a history this version
		// cannot continue. Failing the workflow task keeps the run blocked (Temporal retries
		// the task), as the local engine blocks it, instead of deciding something else.
		panic(fmt.Sprintf("wend: run %s: apply %s: %v", d.st.RunID, ev.Type, err))
	}
	from := len(d.events)
	d.events = append(d.events, ev)
	for i := range out {
		out[i].Seq = uint64(len(d.events) + 1)
		d.events = append(d.events, out[i])
	}
	d.traceFrom(from, !workflow.IsReplaying(d.ctx))
	return out
}

func isAttemptInput(t history.EventType) bool {
	switch t {
	case history.ActivityCompleted, history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityHeartbeatRecorded:
		return true
	}
	return false
}

func isChildOutcome(t history.EventType) bool {
	switch t {
	case history.ChildWorkflowCompleted, history.ChildWorkflowFailed, history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
		return true
	}
	return false
}

// send hands an input to the main loop from a coroutine.
func (d *driver) send(gctx workflow.Context, ev history.Event) { d.inbox.Send(gctx, ev) }

// result turns the wend terminal event into the workflow's result.
func (d *driver) result() (json.RawMessage, error) {
	last := d.events[len(d.events)-1]
	c, _ := history.DataOf[history.Closed](last)
	switch last.Type {
	case history.WorkflowCompleted:
		return c.Output, nil
	case history.WorkflowContinuedAsNew:
		return nil, d.continueAsNew(c)
	case history.WorkflowCancelled:
		if d.root.Err() != nil {
			return nil, d.root.Err() // Temporal status Canceled
		}
	}
	msg := string(last.Type)
	if c.Failure != nil {
		msg = c.Failure.Error()
	}
	return nil, temporal.NewNonRetryableApplicationError(msg, string(last.Type), nil, c)
}

// recordReason writes the run's closed reason into its memo, where a list reads it.
func (d *driver) recordReason() {
	last := d.events[len(d.events)-1]
	if last.Type == history.WorkflowContinuedAsNew {
		return // the status says it, and the next run must not inherit a reason
	}
	_, reason := history.ClosedBy(last)
	if err := workflow.UpsertMemo(d.ctx, map[string]any{wire.MemoClosedReason: reason}); err != nil {
		d.warn("wend: record the closed reason in the memo", "error", err)
	}
}

// continueAsNew starts the next run with the same spec texts; ExecutionStarted carries over
// so the execution timeout spans the chain.
func (d *driver) continueAsNew(c history.Closed) error {
	st := d.st
	// The next run decides by today's rules, as the local engine's continue-as-new does.
	st.RunID, st.Input, st.Rules = "", c.Input, history.RulesCurrent
	next := wire.StartInput{Started: st, Specs: d.in.Specs, SearchAttributes: d.in.SearchAttributes}
	if n := encodedSize(next); n > MaxPayloadBytes {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("continue_as_new: the next run's start input is %d bytes, over the %d-byte limit", n, MaxPayloadBytes),
			history.CategoryStructuralLimit, nil)
	}
	return workflow.NewContinueAsNewError(d.root, wire.WorkflowType, next)
}

// checkInput refuses an input the interpreter could not start with, as the local engine
// does before it records a run: not JSON, or not what the spec's input schema asks for. No
// input (or null) is the empty object, as the local engine makes it, so `input.n ?? 0`
// reads a missing field instead of failing to index null.
func checkInput(w *spec.Workflow, raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("input is not JSON: %v", err)
		}
	}
	if v == nil {
		raw, v = json.RawMessage("{}"), map[string]any{}
	}
	if w.InputSchema != nil {
		if err := spec.ValidateInput(w.InputSchema, v); err != nil {
			return nil, fmt.Errorf("invalid input: %v", err)
		}
	}
	return raw, nil
}
