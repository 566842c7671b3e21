package backend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/temporal/wire"
	batchpb "go.temporal.io/api/batch/v1"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

// A wend batch on Temporal is one of Temporal's batch operations, run by the cluster's
// batcher (durable, each execution acted on once, paced by MaxOperationsPerSecond) over the
// executions the server fixed: cancel is a Cancellation, terminate a Termination, signal a
// Signal of wire.SignalName carrying the wend signal as the single-run signal does. The
// batch's id is the operation's job id.

var _ server.ClusterBatches = (*Backend)(nil)

// batchIdentity is the identity the batches' acts are recorded with.
const batchIdentity = "wend serve (batch)"

// maxListedBatches caps the batches Batches describes, newest first: each is a call.
const maxListedBatches = 100

// maxScannedBatches caps the batch operations Batches reads from visibility (which lists
// the newest first) before keeping the newest maxListedBatches.
const maxScannedBatches = 5000

// StartBatch starts a Temporal batch operation over runs with bt's id as its job id.
func (b *Backend) StartBatch(ctx context.Context, bt api.Batch, runs []history.Run) (api.Batch, error) {
	req := &workflowservice.StartBatchOperationRequest{
		Namespace: b.ns, JobId: bt.ID, Reason: cmp.Or(bt.Request.Reason, "wend batch "+bt.Request.Operation),
		MaxOperationsPerSecond: float32(bt.Request.RPS),
	}
	for _, r := range runs {
		// Executions, not TargetExecutions: clusters before v1.32 read only this field.
		req.Executions = append(req.Executions, &commonpb.WorkflowExecution{WorkflowId: r.WorkflowID, RunId: r.RunID}) //lint:ignore SA1019 older clusters read only Executions
	}
	switch bt.Request.Operation {
	case api.BatchOpCancel:
		req.Operation = &workflowservice.StartBatchOperationRequest_CancellationOperation{
			CancellationOperation: &batchpb.BatchOperationCancellation{Identity: batchIdentity}}
	case api.BatchOpTerminate:
		req.Operation = &workflowservice.StartBatchOperationRequest_TerminationOperation{
			TerminationOperation: &batchpb.BatchOperationTermination{Identity: batchIdentity}}
	case api.BatchOpSignal:
		op, err := b.batchSignal(ctx, bt, runs)
		if err != nil {
			return api.Batch{}, err
		}
		req.Operation = op
	default:
		return api.Batch{}, api.NewError(api.CodeUnsupported, fmt.Sprintf("batch: Temporal runs no %s batch", bt.Request.Operation))
	}
	if _, err := b.c.WorkflowService().StartBatchOperation(ctx, req); err != nil {
		return api.Batch{}, batchError(bt.ID, b.ns, err)
	}
	return b.Batch(ctx, bt.ID)
}

// batchSignal is the Signal operation of a signal batch. The signal is checked against the
// contract (spec `signals:`) of the first run of each workflow, as a single signal is, so a
// signal none of them declares is refused before anything is sent.
func (b *Backend) batchSignal(ctx context.Context, bt api.Batch, runs []history.Run) (*workflowservice.StartBatchOperationRequest_SignalOperation, error) {
	sig := bt.Request.Signal
	sr := api.SignalRequest{Name: sig.Name, Data: sig.Data, ID: cmp.Or(sig.ID, "batch:"+bt.ID)}
	checked := map[string]bool{}
	for _, r := range runs {
		if checked[r.Name] {
			continue
		}
		checked[r.Name] = true
		info, err := b.resolve(ctx, r.RunID)
		if err != nil {
			return nil, err
		}
		if err := b.checkContract(ctx, info, sr); err != nil {
			return nil, err
		}
	}
	in, err := converter.GetDefaultDataConverter().ToPayloads(wire.Signal{Name: sr.Name, Data: sr.Data, SignalID: sr.ID})
	if err != nil {
		return nil, api.NewError(api.CodeInternal, "batch: encode the signal: "+err.Error())
	}
	return &workflowservice.StartBatchOperationRequest_SignalOperation{SignalOperation: &batchpb.BatchOperationSignal{
		Signal: wire.SignalName, Input: in, Identity: batchIdentity}}, nil
}

// Batch describes batch id: its state and counts, its operation and reason.
func (b *Backend) Batch(ctx context.Context, id string) (api.Batch, error) {
	d, err := b.c.WorkflowService().DescribeBatchOperation(ctx, &workflowservice.DescribeBatchOperationRequest{Namespace: b.ns, JobId: id})
	if err != nil {
		return api.Batch{}, batchError(id, b.ns, err)
	}
	bt := api.Batch{
		ID:      d.GetJobId(),
		Request: api.BatchRequest{ID: d.GetJobId(), Operation: batchOpName(d.GetOperationType()), Reason: d.GetReason()},
		Total:   int(d.GetTotalOperationCount()), Done: int(d.GetCompleteOperationCount()), Failed: int(d.GetFailureOperationCount()),
		Status:    b.batchStatus(ctx, id, d.GetState()),
		CreatedAt: d.GetStartTime().AsTime().UTC(), UpdatedAt: time.Now().UTC(),
	}
	if bt.Total == 0 {
		bt.Total = len(d.GetExecutions()) // before the batcher's first report
	}
	bt.Matched, bt.Next = bt.Total, bt.Done+bt.Failed
	if d.GetCloseTime() != nil {
		bt.ClosedAt = d.GetCloseTime().AsTime().UTC()
	}
	return bt, nil
}

// batchStatus is wend's status of a batch: Temporal reports a stopped batch (its workflow
// terminated) as failed, wend as cancelled.
func (b *Backend) batchStatus(ctx context.Context, id string, st enumspb.BatchOperationState) string {
	switch st {
	case enumspb.BATCH_OPERATION_STATE_RUNNING:
		return api.BatchRunning
	case enumspb.BATCH_OPERATION_STATE_COMPLETED:
		return api.BatchCompleted
	}
	d, err := b.c.DescribeWorkflowExecution(ctx, id, "")
	if err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED {
		return api.BatchCancelled
	}
	return api.BatchFailed
}

// batchOpName is wend's name of a Temporal batch operation type.
func batchOpName(t enumspb.BatchOperationType) string {
	switch t {
	case enumspb.BATCH_OPERATION_TYPE_CANCEL_WORKFLOW, enumspb.BATCH_OPERATION_TYPE_CANCEL: //lint:ignore SA1019 older clusters record it
		return api.BatchOpCancel
	case enumspb.BATCH_OPERATION_TYPE_TERMINATE_WORKFLOW, enumspb.BATCH_OPERATION_TYPE_TERMINATE: //lint:ignore SA1019 older clusters record it
		return api.BatchOpTerminate
	case enumspb.BATCH_OPERATION_TYPE_SIGNAL_WORKFLOW, enumspb.BATCH_OPERATION_TYPE_SIGNAL: //lint:ignore SA1019 older clusters record it
		return api.BatchOpSignal
	case enumspb.BATCH_OPERATION_TYPE_DELETE_WORKFLOW, enumspb.BATCH_OPERATION_TYPE_DELETE: //lint:ignore SA1019 older clusters record it
		return api.BatchOpPurge
	}
	return "temporal:" + t.String()
}

// Batches lists the namespace's batch operations, newest first, at most maxListedBatches,
// each described for its counts.
func (b *Backend) Batches(ctx context.Context) ([]api.Batch, error) {
	var infos []*batchpb.BatchOperationInfo
	var token []byte
	for {
		resp, err := b.c.WorkflowService().ListBatchOperations(ctx, &workflowservice.ListBatchOperationsRequest{
			Namespace: b.ns, PageSize: 1000, NextPageToken: token})
		if err != nil {
			return nil, batchError("", b.ns, err)
		}
		infos = append(infos, resp.GetOperationInfo()...)
		if token = resp.GetNextPageToken(); len(token) == 0 || len(infos) >= maxScannedBatches {
			break
		}
	}
	slices.SortFunc(infos, func(x, y *batchpb.BatchOperationInfo) int {
		return cmp.Or(y.GetStartTime().AsTime().Compare(x.GetStartTime().AsTime()), cmp.Compare(y.GetJobId(), x.GetJobId()))
	})
	out := []api.Batch{}
	for _, i := range infos[:min(len(infos), maxListedBatches)] {
		bt, err := b.Batch(ctx, i.GetJobId())
		if err != nil {
			var se *api.Error
			if errors.As(err, &se) && se.Code == api.CodeNotFound {
				continue // gone since listed (retention)
			}
			return nil, err
		}
		out = append(out, bt)
	}
	return out, nil
}

// StopBatch stops batch id's operation; one already closed is answered as it is.
func (b *Backend) StopBatch(ctx context.Context, id string) (api.Batch, error) {
	_, err := b.c.WorkflowService().StopBatchOperation(ctx, &workflowservice.StopBatchOperationRequest{
		Namespace: b.ns, JobId: id, Reason: "wend batch cancel", Identity: batchIdentity})
	if err != nil {
		if now, derr := b.Batch(ctx, id); derr == nil && !now.Open() {
			return now, nil // it closed meanwhile
		}
		return api.Batch{}, batchError(id, b.ns, err)
	}
	return b.Batch(ctx, id)
}

// batchError maps the cluster's refusals of a batch to wend's codes.
func batchError(id, ns string, err error) error {
	var (
		nf *serviceerror.NotFound
		as *serviceerror.WorkflowExecutionAlreadyStarted
		re *serviceerror.ResourceExhausted
	)
	switch {
	case errors.As(err, &nf):
		return api.NewError(api.CodeNotFound, fmt.Sprintf("no batch %q", id))
	case errors.As(err, &as):
		return api.NewError(api.CodeIDTaken, fmt.Sprintf("batch %s exists on the cluster", id))
	case errors.As(err, &re) && re.Cause == enumspb.RESOURCE_EXHAUSTED_CAUSE_CONCURRENT_LIMIT:
		return api.NewError(api.CodeLimit, fmt.Sprintf(
			"batch: namespace %s runs as many batches as its cluster allows at once (frontend.MaxConcurrentBatchOperationPerNamespace): wait for one to close, or stop it with wend batch cancel ID", ns))
	}
	return clusterError(id, err)
}
