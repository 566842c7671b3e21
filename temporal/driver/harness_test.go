package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// specFile is where the test workflows say they come from; children resolve against it.
const specFile = "/flows/test.wend.yaml"

// try is what the fake plugin saw of one call.
type try struct {
	Call       history.ActivityCall
	Liveness   bool  // the driver asked the worker to beat for the try (wire.Call.Liveness)
	StepBeatMS int64 // the step's heartbeat_timeout, for the worker to enforce
	ActivityID string
	Heartbeat  time.Duration
	StartClose time.Duration
	At         time.Time // the test environment's (workflow) clock
}

// plugin plays the worker's ActivityCall activity over a fake plugin:
//
//	echo     returns its input
//	fail     fails with {type, non_retryable} until attempt `until` (0: always), with progress
//	hang     heartbeats progress {"attempt": n}, then blocks without beating, as a dead
//	         worker, until the try is cancelled or times out; on a try with last progress it
//	         completes with {"resumed": progress}
//	slow     calls onSlow (the test cancels there), then blocks until cancelled
type plugin struct {
	env    *testsuite.TestWorkflowEnvironment
	onSlow func()

	mu        sync.Mutex
	tries     []try
	cancelled []string                 // ActivityIDs Temporal was asked to cancel
	released  map[string]chan struct{} // closed when that ActivityID is cancelled
}

// release returns the channel closed when the activity with this id is cancelled.
func (p *plugin) release(id string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released[id] == nil {
		p.released[id] = make(chan struct{})
	}
	return p.released[id]
}

// activityCancelled is the environment's listener: the test environment drops a cancelled
// activity without cancelling its context, so the fake is told here.
func (p *plugin) activityCancelled(info *activity.Info) {
	ch := p.release(info.ActivityID)
	p.mu.Lock()
	p.cancelled = append(p.cancelled, info.ActivityID)
	p.mu.Unlock()
	close(ch)
}

func (p *plugin) cancelledIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.cancelled)
}

// fakeBuild is the plugin build the fake reports serving every try.
const fakeBuild = "fa4eb01d"

// callBuild is call as wire.ActivityCallBuild, naming fakeBuild.
func (p *plugin) callBuild(ctx context.Context, wc wire.Call) (wire.Result, error) {
	out, err := p.call(ctx, wc)
	if err != nil {
		return wire.Result{}, err
	}
	return wire.Result{Output: out, PluginSHA256: fakeBuild}, nil
}

func (p *plugin) call(ctx context.Context, wc wire.Call) (json.RawMessage, error) {
	call := wc.ActivityCall
	info := activity.GetInfo(ctx)
	p.mu.Lock()
	p.tries = append(p.tries, try{Call: call, Liveness: wc.Liveness, StepBeatMS: wc.HeartbeatTimeoutMS, ActivityID: info.ActivityID, Heartbeat: info.HeartbeatTimeout,
		StartClose: info.StartToCloseTimeout, At: p.env.Now()})
	p.mu.Unlock()
	var in map[string]any
	_ = json.Unmarshal(call.Input, &in)
	switch call.Activity {
	case "fail":
		until, _ := in["until"].(float64)
		if until == 0 || call.Attempt < int(until) {
			typ, _ := in["type"].(string)
			nr, _ := in["non_retryable"].(bool)
			af := wire.ActivityFailure{Error: history.ActivityError{Type: typ, Message: fmt.Sprintf("boom %d", call.Attempt),
				NonRetryable: nr, Category: history.CategoryActivity}, Progress: json.RawMessage(fmt.Sprintf(`{"failed":%d}`, call.Attempt))}
			return nil, temporal.NewApplicationError(af.Error.Message, typ, af)
		}
	case "hang":
		if len(call.LastProgress) > 0 && string(call.LastProgress) != "null" { // none arrives as JSON null
			return history.MustData(map[string]any{"resumed": call.LastProgress}), nil
		}
		activity.RecordHeartbeat(ctx, wire.Progress{Progress: json.RawMessage(fmt.Sprintf(`{"attempt":%d}`, call.Attempt))})
		return nil, p.block(ctx, info.ActivityID, info.HeartbeatTimeout)
	case "slow":
		if p.onSlow != nil {
			p.onSlow()
		}
		return nil, p.block(ctx, info.ActivityID, 6*time.Second)
	}
	return call.Input, nil
}

// block waits for the try's end: its cancel or its start-to-close deadline. The test
// environment marks a missed heartbeat (its watcher looks every half timeout) but leaves the
// call running, so a hung call also returns after ten heartbeat timeouts, by when even a
// starved watcher has marked it; the environment then reports the timeout.
func (p *plugin) block(ctx context.Context, id string, heartbeat time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.release(id):
		return errors.New("fake plugin: cancelled")
	case <-time.After(10 * heartbeat):
		return errors.New("fake plugin: hung")
	}
}

func (p *plugin) triesOf(activityName string) []try {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []try
	for _, t := range p.tries {
		if t.Call.Activity == activityName {
			out = append(out, t)
		}
	}
	return out
}

func newEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *plugin) {
	return newEnvLogging(t, os.Stderr)
}

// newEnvLogging is newEnv with the workflow's warnings written to w.
func newEnvLogging(t *testing.T, w io.Writer) (*testsuite.TestWorkflowEnvironment, *plugin) {
	t.Helper()
	return newEnvWith(t, w, Register)
}

// newEnvWith is newEnvLogging with the workflow registered by register.
func newEnvWith(t *testing.T, w io.Writer, register func(Registry)) (*testsuite.TestWorkflowEnvironment, *plugin) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	e := s.NewTestWorkflowEnvironment()
	// The SDK fails a workflow task whose code runs over 1 s without yielding; under -race on
	// a loaded 2-core machine the first spec load alone can take that long.
	e.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	e.SetStartTime(sim.T0)
	e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "wf"})
	p := &plugin{env: e, released: map[string]chan struct{}{}}
	e.SetOnActivityCanceledListener(p.activityCancelled)
	register(e)
	e.RegisterActivityWithOptions(p.call, activity.RegisterOptions{Name: wire.ActivityCall})
	e.RegisterActivityWithOptions(p.callBuild, activity.RegisterOptions{Name: wire.ActivityCallBuild})
	return e, p
}

func startInput(src string, input any, specs map[string]string) wire.StartInput {
	return wire.StartInput{Specs: specs, Started: history.Started{WorkflowID: "wf", Input: history.MustData(input),
		SpecFile: specFile, SpecSource: src}}
}

// run executes the workflow to its end and returns its wend history, read through the
// paged query and checked: it replays on a fresh interpreter, passes history.Check, exports.
func run(t *testing.T, e *testsuite.TestWorkflowEnvironment, in wire.StartInput) []history.Event {
	t.Helper()
	e.ExecuteWorkflow(wire.WorkflowType, in)
	if !e.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	evs := queryAll(t, e, 700)
	checkHistory(t, evs)
	return evs
}

// queryAll reads the whole wend history in pages of at most maxBytes.
func queryAll(t *testing.T, e *testsuite.TestWorkflowEnvironment, maxBytes int) []history.Event {
	t.Helper()
	var evs []history.Event
	for {
		v, err := e.QueryWorkflow(wire.QueryEvents, wire.EventsQuery{After: uint64(len(evs)), MaxBytes: maxBytes})
		if err != nil {
			t.Fatalf("query: %v (workflow error: %v)", err, e.GetWorkflowError())
		}
		var page wire.EventsPage
		if err := v.Get(&page); err != nil {
			t.Fatal(err)
		}
		if len(page.Events) == 0 && page.More {
			t.Fatal("query: an empty page says more follow")
		}
		evs = append(evs, page.Events...)
		if !page.More {
			if uint64(len(evs)) != page.Total {
				t.Fatalf("query: read %d events, the run has %d", len(evs), page.Total)
			}
			return evs
		}
	}
}

// checkHistory is every test's ending: the history the Temporal-hosted run wrote replays on a
// fresh interpreter, passes history.Check and exports.
func checkHistory(t *testing.T, evs []history.Event) *export.Document {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		t.Fatal(err)
	}
	if st, err = history.CurrentSpec(st, evs); err != nil { // a moved run replays on its new text
		t.Fatal(err)
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	if err := interpreter.New(w, st).Replay(evs); err != nil {
		t.Fatalf("replay: %v", err)
	}
	last := evs[len(evs)-1]
	rec := history.Run{WorkflowID: st.WorkflowID, RunID: st.RunID, Name: w.Name, Status: history.StatusRunning,
		SpecFile: st.SpecFile, StartedAt: evs[0].Time, LastSeq: last.Seq}
	if last.Type.Terminal() {
		rec.Status, rec.ClosedReason = history.ClosedBy(last)
		rec.ClosedAt = last.Time
	}
	if ps := history.Check(rec, evs); len(ps) > 0 {
		t.Fatalf("history check: %v", ps)
	}
	doc, err := export.Build(rec, evs)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	return doc
}

// decisions lists a history's decisions as "Type Step #attempt", sorted: the same multiset on
// both engines, whatever order outcomes of one batch came back in.
func decisions(evs []history.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type.Decision() {
			out = append(out, fmt.Sprintf("%s %s #%d", e.Type, e.Step, e.Attempt))
		}
	}
	sort.Strings(out)
	return out
}

// sameAsLocal checks the Temporal history decided what the local interpreter, driven by
// the in-memory host (interpreter/sim), decided: same decisions, same terminal event and payload outcome.
func sameAsLocal(t *testing.T, temporalEvs []history.Event, local *sim.Sim) {
	t.Helper()
	local.ReplayOK(t)
	if got, want := decisions(temporalEvs), decisions(local.Events); !slices.Equal(got, want) {
		t.Fatalf("decisions differ from a local run\ntemporal: %q\nlocal:    %q", got, want)
	}
	tl, ll := temporalEvs[len(temporalEvs)-1], local.Last()
	tc, _ := history.DataOf[history.Closed](tl)
	lc := local.Closed(t)
	if tl.Type != ll.Type || string(tc.Output) != string(lc.Output) {
		t.Fatalf("closed %s %s, locally %s %s", tl.Type, tc.Output, ll.Type, lc.Output)
	}
}

func closedOfRun(t *testing.T, evs []history.Event) history.Closed {
	t.Helper()
	last := evs[len(evs)-1]
	if !last.Type.Terminal() {
		t.Fatalf("last event %s is not terminal", last.Type)
	}
	c, err := history.DataOf[history.Closed](last)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ofType(evs []history.Event, typ history.EventType) []history.Event {
	var out []history.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// wendFailure reads the workflow error of a run that failed the wend way: a non-retryable
// ApplicationError whose type is the terminal event type and whose detail is its Closed.
func wendFailure(t *testing.T, e *testsuite.TestWorkflowEnvironment, typ history.EventType) history.Closed {
	t.Helper()
	var ae *temporal.ApplicationError
	if err := e.GetWorkflowError(); !errors.As(err, &ae) {
		t.Fatalf("workflow error %v, want an ApplicationError", err)
	}
	if ae.Type() != string(typ) || !ae.NonRetryable() {
		t.Fatalf("ApplicationError type %q non-retryable %v, want %q non-retryable", ae.Type(), ae.NonRetryable(), typ)
	}
	var c history.Closed
	if err := ae.Details(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

func output(t *testing.T, e *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var out json.RawMessage
	if err := e.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return string(out)
}
