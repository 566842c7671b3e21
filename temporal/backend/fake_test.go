package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// fakeClient answers the calls the backend makes from a table of executions and records
// the calls that change something. Any other client method panics (nil embedded interface).
type fakeClient struct {
	client.Client
	runs   map[string]*workflowpb.WorkflowExecutionInfo // by workflow id: the newest run
	calls  []string
	start  client.StartWorkflowOptions
	input  wire.StartInput
	getErr error                               // what a run's Get returns (nil: the run completed with no output)
	events map[string][]history.Event          // wend history by run id, for the wend.events query
	inputs map[string]wire.StartInput          // start input by run id, for GetWorkflowHistory
	op     fakeOperator                        // the namespace's search attributes
	listed []*workflowpb.WorkflowExecutionInfo // what a list query without a run id returns
}

func (f *fakeClient) OperatorService() operatorservice.OperatorServiceClient { return f.op }

func (f *fakeClient) GetWorkflow(_ context.Context, id, runID string) client.WorkflowRun {
	return fakeRun{id: id, err: f.getErr}
}

func (f *fakeClient) DescribeWorkflowExecution(_ context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	for _, i := range f.runs {
		if i.GetExecution().GetWorkflowId() == id && (runID == "" || i.GetExecution().GetRunId() == runID) {
			return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: i}, nil
		}
	}
	return nil, serviceerror.NewNotFound("workflow not found")
}

func (f *fakeClient) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.calls = append(f.calls, "list "+req.GetQuery())
	resp := &workflowservice.ListWorkflowExecutionsResponse{}
	if !strings.Contains(req.GetQuery(), "RunId = '") {
		resp.Executions = f.listed
	}
	for _, i := range f.runs {
		if strings.Contains(req.GetQuery(), "RunId = '"+i.GetExecution().GetRunId()+"'") {
			resp.Executions = append(resp.Executions, i)
		}
	}
	return resp, nil
}

func (f *fakeClient) SignalWorkflow(_ context.Context, id, runID, name string, arg any) error {
	b, _ := json.Marshal(arg)
	f.calls = append(f.calls, fmt.Sprintf("signal %s %s %s", id, name, b))
	return nil
}

func (f *fakeClient) CancelWorkflow(_ context.Context, id, runID string) error {
	f.calls = append(f.calls, "cancel "+id)
	return nil
}

func (f *fakeClient) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	f.calls = append(f.calls, fmt.Sprintf("start %s %v", o.ID, wf))
	f.start, f.input = o, args[0].(wire.StartInput)
	i := info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)
	i.Execution.WorkflowId, i.Execution.RunId = o.ID, "new-run"
	f.runs[o.ID] = i
	return fakeRun{id: o.ID}, nil
}

type fakeRun struct {
	id  string
	err error
}

func (r fakeRun) GetID() string                  { return r.id }
func (r fakeRun) GetRunID() string               { return "new-run" }
func (r fakeRun) GetFirstExecutionRunID() string { return "new-run" }
func (r fakeRun) Get(context.Context, any) error { return r.err }
func (r fakeRun) GetWithOptions(context.Context, any, client.WorkflowRunGetOptions) error {
	return nil
}

func newFake(runs ...*workflowpb.WorkflowExecutionInfo) (*Backend, *fakeClient) {
	f := &fakeClient{runs: map[string]*workflowpb.WorkflowExecutionInfo{}}
	for _, r := range runs {
		f.runs[r.GetExecution().GetWorkflowId()] = r
	}
	b, _ := Dial(Options{Client: f, Namespace: "ns", TaskQueue: "tq"})
	return b, f
}

// TestSteerClosedRunRefused: a signal, cancel or terminate to a finished run is refused
// with the local code and message, and nothing is sent.
func TestSteerClosedRunRefused(t *testing.T) {
	b, f := newFake(info(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil))
	_, err := b.Signal(context.Background(), "order-1", "go", nil)
	var se *api.Error
	if !errors.As(err, &se) || se.Code != api.CodeRunClosed || se.Message != "run run-1 of order-1 is completed: signals to a finished run are rejected" {
		t.Fatalf("err = %v", err)
	}
	if _, err := b.Cancel(context.Background(), "order-1", "why"); code(err) != api.CodeRunClosed {
		t.Fatalf("cancel: %v", err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("sent %v to a closed run", f.calls)
	}
}

// code is a backend error's server code, "" for none.
func code(err error) string {
	var se *api.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// TestCancelSendsReasonFirst: the reason travels on wend.cancel before Temporal's cancel,
// which has none; a run id finds its workflow through visibility.
func TestCancelSendsReasonFirst(t *testing.T) {
	b, f := newFake(info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil))
	r, err := b.Cancel(context.Background(), "run-1", "no longer needed")
	if err != nil || r.WorkflowID != "order-1" {
		t.Fatalf("cancel = %+v, %v", r, err)
	}
	want := []string{"list WorkflowType = 'wend.v1' AND RunId = 'run-1'", `signal order-1 wend.cancel {"reason":"no longer needed"}`, "cancel order-1"}
	if strings.Join(f.calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(f.calls, "\n"), strings.Join(want, "\n"))
	}
	if _, err := b.Show("nope"); !errors.Is(err, history.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

// TestStartIsIdempotentAndBundles: a start checks the input before any call, an id that
// names a run returns it without starting, and a new start carries the spec closure, the
// memo and the id policies.
func TestStartIsIdempotentAndBundles(t *testing.T) {
	existing := info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)
	b, f := newFake(existing)
	src := "wend: v1\nname: order\ninput: {type: object, required: [n]}\nsteps: [{delay: 1s}]\n"
	if _, err := b.Start(context.Background(), engine.StartRequest{SpecFile: "/w/o.wend.yaml", Source: src, Input: json.RawMessage(`{}`)}); code(err) != api.CodeInvalid {
		t.Fatalf("bad input: %v", err)
	}
	st, err := b.Start(context.Background(), engine.StartRequest{WorkflowID: "order-1", SpecFile: "/w/o.wend.yaml", Source: src, Input: json.RawMessage(`{"n":1}`)})
	if err != nil || st.Started || st.Run.RunID != "run-1" {
		t.Fatalf("start of an existing id = %+v, %v", st, err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("calls %v before a new start", f.calls)
	}
	st, err = b.Start(context.Background(), engine.StartRequest{WorkflowID: "order-2", SpecFile: "/w/o.wend.yaml", Source: src, Input: json.RawMessage(`{"n":1}`)})
	if err != nil || !st.Started || st.Run.WorkflowID != "order-2" {
		t.Fatalf("new start = %+v, %v", st, err)
	}
	o := f.start
	if o.TaskQueue != "tq" || o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING ||
		o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE || o.Memo[memoName] != "order" || o.Memo[memoSpecFile] != "/w/o.wend.yaml" {
		t.Fatalf("start options %+v", o)
	}
	if in := f.input.Started; in.WorkflowID != "order-2" || in.SpecSource != src || string(in.Input) != `{"n":1}` || in.SpecSHA256 != o.Memo[memoSpecSHA256] {
		t.Fatalf("start input %+v", in)
	}
}
