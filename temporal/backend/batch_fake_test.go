package backend

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	batchpb "go.temporal.io/api/batch/v1"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// batchService answers the batch calls of WorkflowService from a table of described
// operations and records the requests; any other call panics.
type batchService struct {
	workflowservice.WorkflowServiceClient
	started  []*workflowservice.StartBatchOperationRequest
	stopped  []string
	ops      map[string]*workflowservice.DescribeBatchOperationResponse
	startErr error
}

func (s *batchService) StartBatchOperation(_ context.Context, req *workflowservice.StartBatchOperationRequest, _ ...grpc.CallOption) (*workflowservice.StartBatchOperationResponse, error) {
	if s.startErr != nil {
		return nil, s.startErr
	}
	s.started = append(s.started, req)
	s.ops[req.GetJobId()] = &workflowservice.DescribeBatchOperationResponse{JobId: req.GetJobId(), Reason: req.GetReason(),
		State: enumspb.BATCH_OPERATION_STATE_RUNNING, StartTime: timestamppb.New(t0),
		OperationType: enumspb.BATCH_OPERATION_TYPE_CANCEL_WORKFLOW,
		Executions:    []*commonpb.Execution{{BusinessId: "order-1", RunId: "run-1"}}}
	return &workflowservice.StartBatchOperationResponse{}, nil
}

func (s *batchService) DescribeBatchOperation(_ context.Context, req *workflowservice.DescribeBatchOperationRequest, _ ...grpc.CallOption) (*workflowservice.DescribeBatchOperationResponse, error) {
	d, ok := s.ops[req.GetJobId()]
	if !ok {
		return nil, serviceerror.NewNotFound("batch not found")
	}
	return d, nil
}

func (s *batchService) ListBatchOperations(context.Context, *workflowservice.ListBatchOperationsRequest, ...grpc.CallOption) (*workflowservice.ListBatchOperationsResponse, error) {
	resp := &workflowservice.ListBatchOperationsResponse{}
	for id, d := range s.ops {
		resp.OperationInfo = append(resp.OperationInfo, &batchpb.BatchOperationInfo{JobId: id, State: d.GetState(), StartTime: d.GetStartTime()})
	}
	return resp, nil
}

func (s *batchService) StopBatchOperation(_ context.Context, req *workflowservice.StopBatchOperationRequest, _ ...grpc.CallOption) (*workflowservice.StopBatchOperationResponse, error) {
	s.stopped = append(s.stopped, req.GetJobId())
	s.ops[req.GetJobId()].State = enumspb.BATCH_OPERATION_STATE_FAILED
	return &workflowservice.StopBatchOperationResponse{}, nil
}

// batchClient is fakeClient with a WorkflowService that runs batches.
type batchClient struct {
	*fakeClient
	svc *batchService
}

func (c batchClient) WorkflowService() workflowservice.WorkflowServiceClient { return c.svc }

func newBatchFake(t *testing.T) (*Backend, *fakeClient, *batchService) {
	t.Helper()
	_, f := newFake(info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil))
	f.inputs = startedWith(contractSpec)
	svc := &batchService{ops: map[string]*workflowservice.DescribeBatchOperationResponse{}}
	b, err := Dial(Options{Client: batchClient{fakeClient: f, svc: svc}, Namespace: "ns", TaskQueue: "tq"})
	if err != nil {
		t.Fatal(err)
	}
	return b, f, svc
}

var batchRun = history.Run{WorkflowID: "order-1", RunID: "run-1", Name: "order", Status: history.StatusRunning}

// TestStartBatchMapsTheOperation: each wend operation starts the matching Temporal batch
// operation over the runs given (their workflow and run ids), at the batch's pace, with
// its reason; a signal carries the wend signal (with the batch's idempotency id) on
// wend.signal, as a single signal does.
func TestStartBatchMapsTheOperation(t *testing.T) {
	for _, c := range []struct {
		name   string
		req    api.BatchRequest
		check  func(t *testing.T, req *workflowservice.StartBatchOperationRequest)
		reason string
	}{
		{"cancel", api.BatchRequest{Operation: api.BatchOpCancel, Reason: "tidy", RPS: 20}, func(t *testing.T, req *workflowservice.StartBatchOperationRequest) {
			if req.GetCancellationOperation() == nil {
				t.Fatalf("operation %T, want a cancellation", req.GetOperation())
			}
		}, "tidy"},
		{"terminate", api.BatchRequest{Operation: api.BatchOpTerminate, RPS: 20}, func(t *testing.T, req *workflowservice.StartBatchOperationRequest) {
			if req.GetTerminationOperation() == nil {
				t.Fatalf("operation %T, want a termination", req.GetOperation())
			}
		}, "wend batch terminate"},
		{"signal", api.BatchRequest{Operation: api.BatchOpSignal, RPS: 20,
			Signal: &api.BatchSignal{Name: "approve", Data: json.RawMessage(`{"by":"ann"}`)}}, func(t *testing.T, req *workflowservice.StartBatchOperationRequest) {
			op := req.GetSignalOperation()
			if op == nil || op.GetSignal() != wire.SignalName {
				t.Fatalf("operation %v, want a signal on %s", req.GetOperation(), wire.SignalName)
			}
			var s wire.Signal
			if err := converter.GetDefaultDataConverter().FromPayloads(op.GetInput(), &s); err != nil {
				t.Fatal(err)
			}
			if s.Name != "approve" || string(s.Data) != `{"by":"ann"}` || s.SignalID != "batch:b1" {
				t.Fatalf("signal payload %+v", s)
			}
		}, "wend batch signal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, _, svc := newBatchFake(t)
			c.req.ID = "b1"
			bt, err := b.StartBatch(context.Background(), api.Batch{ID: "b1", Request: c.req}, []history.Run{batchRun})
			if err != nil {
				t.Fatal(err)
			}
			if len(svc.started) != 1 {
				t.Fatalf("%d batches started", len(svc.started))
			}
			req := svc.started[0]
			ex := req.GetExecutions() //lint:ignore SA1019 the field the backend sets
			if req.GetNamespace() != "ns" || req.GetJobId() != "b1" || req.GetReason() != c.reason || req.GetMaxOperationsPerSecond() != 20 ||
				len(ex) != 1 || ex[0].GetWorkflowId() != "order-1" || ex[0].GetRunId() != "run-1" {
				t.Fatalf("request %v", req)
			}
			c.check(t, req)
			if bt.ID != "b1" || !bt.Open() || bt.Total != 1 {
				t.Fatalf("started batch %+v", bt)
			}
		})
	}
}

// TestBatchSignalContract: a signal batch whose signal the runs' workflow does not declare is
// refused with the single signal's code, and no batch starts.
func TestBatchSignalContract(t *testing.T) {
	b, _, svc := newBatchFake(t)
	_, err := b.StartBatch(context.Background(), api.Batch{ID: "b1", Request: api.BatchRequest{ID: "b1", Operation: api.BatchOpSignal,
		Signal: &api.BatchSignal{Name: "nope"}}}, []history.Run{batchRun})
	if code(err) != api.CodeUnknownSignal || len(svc.started) != 0 {
		t.Fatalf("err %v, started %d", err, len(svc.started))
	}
}

// TestBatchProgressAndStates: a batch's counts and state come from DescribeBatchOperation; a
// stopped batch (its workflow terminated) is cancelled, a failed one failed.
func TestBatchProgressAndStates(t *testing.T) {
	b, f, svc := newBatchFake(t)
	closed := timestamppb.New(t0.Add(time.Minute))
	svc.ops["done"] = &workflowservice.DescribeBatchOperationResponse{JobId: "done", State: enumspb.BATCH_OPERATION_STATE_COMPLETED,
		OperationType: enumspb.BATCH_OPERATION_TYPE_TERMINATE_WORKFLOW, Reason: "r", StartTime: timestamppb.New(t0), CloseTime: closed,
		TotalOperationCount: 5, CompleteOperationCount: 4, FailureOperationCount: 1}
	svc.ops["stopped"] = &workflowservice.DescribeBatchOperationResponse{JobId: "stopped", State: enumspb.BATCH_OPERATION_STATE_FAILED,
		StartTime: timestamppb.New(t0.Add(time.Second)), CloseTime: closed}
	svc.ops["broke"] = &workflowservice.DescribeBatchOperationResponse{JobId: "broke", State: enumspb.BATCH_OPERATION_STATE_FAILED,
		StartTime: timestamppb.New(t0.Add(2 * time.Second)), CloseTime: closed}
	term := info(enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, nil)
	term.Execution.WorkflowId = "stopped"
	f.runs["stopped"] = term
	fail := info(enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, nil)
	fail.Execution.WorkflowId = "broke"
	f.runs["broke"] = fail

	bt, err := b.Batch(context.Background(), "done")
	if err != nil {
		t.Fatal(err)
	}
	if bt.Status != api.BatchCompleted || bt.Total != 5 || bt.Done != 4 || bt.Failed != 1 || bt.Next != 5 ||
		bt.Request.Operation != api.BatchOpTerminate || bt.Request.Reason != "r" || !bt.ClosedAt.Equal(closed.AsTime()) {
		t.Fatalf("done: %+v", bt)
	}
	list, err := b.Batches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, bt := range list {
		got = append(got, bt.ID+":"+bt.Status)
	}
	if want := []string{"broke:failed", "stopped:cancelled", "done:completed"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("list %v, want newest first %v", got, want)
	}
	if _, err := b.Batch(context.Background(), "nope"); code(err) != api.CodeNotFound {
		t.Fatalf("unknown batch: %v", err)
	}
}

// TestStopBatch: cancelling a running batch stops its operation; the batch then reads as
// cancelled.
func TestStopBatch(t *testing.T) {
	b, f, svc := newBatchFake(t)
	if _, err := b.StartBatch(context.Background(), api.Batch{ID: "b1", Request: api.BatchRequest{ID: "b1", Operation: api.BatchOpCancel}}, []history.Run{batchRun}); err != nil {
		t.Fatal(err)
	}
	term := info(enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, nil)
	term.Execution.WorkflowId = "b1"
	f.runs["b1"] = term
	bt, err := b.StopBatch(context.Background(), "b1")
	if err != nil {
		t.Fatal(err)
	}
	if bt.Status != api.BatchCancelled || len(svc.stopped) != 1 {
		t.Fatalf("stopped: %+v, stop calls %v", bt, svc.stopped)
	}
}

// TestBatchStartRefusals: the cluster's refusals map to wend's codes, naming what to do.
func TestBatchStartRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code string
	}{
		{"busy", &serviceerror.ResourceExhausted{Cause: enumspb.RESOURCE_EXHAUSTED_CAUSE_CONCURRENT_LIMIT, Message: "Max concurrent batch operations is reached"}, api.CodeLimit},
		{"taken", serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""), api.CodeIDTaken},
		{"other", serviceerror.NewUnavailable("down"), api.CodeInternal},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, _, svc := newBatchFake(t)
			svc.startErr = c.err
			_, err := b.StartBatch(context.Background(), api.Batch{ID: "b1", Request: api.BatchRequest{ID: "b1", Operation: api.BatchOpTerminate}}, []history.Run{batchRun})
			if code(err) != c.code {
				t.Fatalf("err %v, want code %s", err, c.code)
			}
		})
	}
}
