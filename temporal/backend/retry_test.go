package backend

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// QueryWorkflow answers wend.events from f.events in one page.
func (f *fakeClient) QueryWorkflow(_ context.Context, id, runID, name string, _ ...any) (converter.EncodedValue, error) {
	evs := f.events[runID]
	return jsonValue{wire.EventsPage{Events: evs, Total: uint64(len(evs))}}, nil
}

// GetWorkflowHistory is a run's first Temporal event, carrying its start input.
func (f *fakeClient) GetWorkflowHistory(_ context.Context, id, runID string, _ bool, _ enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	p, err := converter.GetDefaultDataConverter().ToPayloads(f.inputs[runID])
	if err != nil {
		panic(err)
	}
	return &fakeIter{evs: []*historypb.HistoryEvent{{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{Input: p}}}}}
}

type fakeIter struct{ evs []*historypb.HistoryEvent }

func (i *fakeIter) HasNext() bool { return len(i.evs) > 0 }
func (i *fakeIter) Next() (*historypb.HistoryEvent, error) {
	ev := i.evs[0]
	i.evs = i.evs[1:]
	return ev, nil
}

type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return true }
func (j jsonValue) Get(ptr any) error {
	b, err := json.Marshal(j.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

// failedRun is a wend history whose second step failed for good in its activity.
func failedRun(t *testing.T, src string, answer sim.Answer) []history.Event {
	t.Helper()
	s := sim.New(t, src, nil)
	s.RunActivities(answer)
	if s.Last().Type != history.WorkflowFailed {
		t.Fatalf("the run ended %s", s.Last().Type)
	}
	return s.Events
}

const twoSteps = sim.Head + `steps:
  - activity: p.a
  - activity: p.b
`

func failB(act string, in any, _ int) (any, *history.Failure) {
	if act == "b" {
		return nil, &history.Failure{Type: "Down", Message: "b is down", NonRetryable: true}
	}
	return in, nil
}

// TestRetryOnTemporalStartsTheFailedRunsPrefix: wend retry --temporal starts a new execution
// of the failed run's workflow id, only over a failed run (a running one keeps its id), with
// the local retry's prefix and payload and the spec texts the failed run started with.
func TestRetryOnTemporalStartsTheFailedRunsPrefix(t *testing.T) {
	evs := failedRun(t, twoSteps, failB)
	failed := info(enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, map[string]string{memoName: "t", memoSpecFile: "/w/t.wend.yaml"})
	b, f := newFake(failed)
	f.events = map[string][]history.Event{"run-1": evs}
	f.inputs = map[string]wire.StartInput{"run-1": {Specs: map[string]string{"/w/child.wend.yaml": "child text"}}}
	got, err := b.Retry(context.Background(), "order-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.RetryOf != "run-1" || got.Run.RunID != "new-run" || got.Run.WorkflowID != "order-1" {
		t.Fatalf("retried %+v", got)
	}
	o := f.start
	if o.ID != "order-1" || o.TaskQueue != "wend" || o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY ||
		o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL || o.Memo[memoName] != "t" {
		t.Fatalf("start options %+v", o)
	}
	plan, err := interpreter.PlanRetry("run-1", evs)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.StartInput{Started: plan.Started, Specs: f.inputs["run-1"].Specs, Prefix: plan.Prefix, RetryActivity: plan.ActivityExecID}
	if !reflect.DeepEqual(f.input, want) {
		t.Fatalf("start input\n%+v\nwant\n%+v", f.input, want)
	}
	if f.input.Started.RetryOf != "run-1" || f.input.RetryActivity == "" {
		t.Fatalf("start input %+v", f.input.Started)
	}
}

// TestRetryOnTemporalRefusals: the local refusals, with their text and CodeNotRetryable, and
// nothing started: an open or completed run, a timed-out one, a compensated one, one that
// failed other than in an activity; a prefix over Temporal's payload limit is too_large.
func TestRetryOnTemporalRefusals(t *testing.T) {
	failedEvs := failedRun(t, twoSteps, failB)
	compensated := failedRun(t, sim.Head+`compensate_on_failure: true
steps:
  - activity: p.a
    compensate_with: {activity: p.undo}
  - activity: p.b
`, failB)
	for _, tc := range []struct {
		name   string
		status enumspb.WorkflowExecutionStatus
		reason string
		evs    []history.Event
		specs  map[string]string
		code   string
		msg    string
	}{
		{"running", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "", failedEvs, nil, api.CodeNotRetryable,
			"retry order-1: run run-1 is running (); only failed runs can be retried"},
		{"completed", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "", failedEvs, nil, api.CodeNotRetryable,
			"retry order-1: run run-1 is completed (completed); only failed runs can be retried"},
		{"timed out", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, history.ClosedTimedOut, failedEvs, nil, api.CodeNotRetryable,
			"retry order-1: run run-1 is failed (timed_out); only failed runs can be retried"},
		{"compensated", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "", compensated, nil, api.CodeNotRetryable,
			"retry order-1: run run-1 was compensated after it failed; its completed steps were undone, so it cannot resume"},
		{"not an activity", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "", failedRun(t, sim.Head+"steps:\n  - fail: {message: no}\n", sim.Echo), nil,
			api.CodeNotRetryable, "retry order-1: run run-1 did not fail in an activity (see wend show order-1); retry resumes only from a failed activity"},
		{"too large", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "", failedEvs, map[string]string{"/w/big.wend.yaml": strings.Repeat("x", wire.MaxPayloadBytes)},
			api.CodeTooLarge, "over the 2080768-byte limit of one Temporal payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			memo := map[string]string{}
			if tc.reason != "" {
				memo[memoReason] = tc.reason
			}
			b, f := newFake(info(tc.status, memo))
			f.events = map[string][]history.Event{"run-1": tc.evs}
			f.inputs = map[string]wire.StartInput{"run-1": {Specs: tc.specs}}
			_, err := b.Retry(context.Background(), "order-1")
			if code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v (code %q), want %s %q", err, code(err), tc.code, tc.msg)
			}
			if f.start.ID != "" {
				t.Fatalf("started %+v", f.start)
			}
		})
	}
}
