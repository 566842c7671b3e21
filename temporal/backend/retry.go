package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// Retry resumes the failed newest run of a workflow from its failed activity, as the local
// engine does: a new execution of the same workflow id whose start input carries the failed
// run's history up to that activity's last try (interpreter.PlanRetry, the local rule), the
// spec texts the failed run started with, and its activity_execution_id base, so the retried
// step keeps its idempotency key and completed steps do not run again. The refusals are the
// local ones, with CodeNotRetryable; a prefix over Temporal's payload limit is CodeTooLarge.
func (b *Backend) Retry(ctx context.Context, id string) (api.Retried, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	info, err := b.resolve(ctx, id)
	if err != nil {
		return api.Retried{}, err
	}
	old := runOf(info)
	wid := old.WorkflowID
	if newest, err := b.resolveWorkflow(ctx, wid); err != nil {
		return api.Retried{}, err
	} else if n := runOf(newest); n.RunID != old.RunID {
		return api.Retried{}, notRetryable("retry %s: run %s is not the newest run of %s (that is %s, %s); retry %s instead",
			id, old.RunID, wid, n.RunID, n.Status, wid)
	}
	if old.Status != history.StatusFailed || old.ClosedReason == history.ClosedTimedOut {
		return api.Retried{}, notRetryable("retry %s: run %s is %s (%s); only failed runs can be retried", wid, old.RunID, old.Status, old.ClosedReason)
	}
	evs, _, err := b.events(ctx, info, 0)
	if err != nil {
		return api.Retried{}, err
	}
	plan, err := interpreter.PlanRetry(old.RunID, evs)
	switch {
	case errors.Is(err, interpreter.ErrRetryCompensated):
		return api.Retried{}, notRetryable("retry %s: run %s was compensated after it failed; its completed steps were undone, so it cannot resume", wid, old.RunID)
	case errors.Is(err, interpreter.ErrRetryNoActivity):
		return api.Retried{}, notRetryable("retry %s: run %s did not fail in an activity (see wend show %s); retry resumes only from a failed activity", wid, old.RunID, wid)
	case err != nil:
		return api.Retried{}, api.NewError(api.CodeInternal, fmt.Sprintf("retry %s: the history of run %s: %v", wid, old.RunID, err))
	}
	first, err := b.startInput(ctx, info)
	if err != nil {
		return api.Retried{}, err
	}
	in := wire.StartInput{Started: plan.Started, Specs: first.Specs, Prefix: plan.Prefix, RetryActivity: plan.ActivityExecID,
		SearchAttributes: first.SearchAttributes}
	if raw, err := json.Marshal(in); err != nil || len(raw) > wire.MaxPayloadBytes {
		return api.Retried{}, api.NewError(api.CodeTooLarge, fmt.Sprintf(
			"retry %s: run %s's history up to the failed try makes a %d-byte start input, over the %d-byte limit of one Temporal payload; start the workflow again under a new id",
			wid, old.RunID, len(raw), wire.MaxPayloadBytes))
	}
	tq := info.GetTaskQueue()
	if tq == "" {
		tq = b.tq
	}
	run, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: wid, TaskQueue: tq,
		// Only a closed failed run gives its id to the retry; a run started meanwhile keeps it.
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		Memo:                     map[string]any{memoName: old.Name, memoSpecFile: plan.Started.SpecFile, memoSpecSHA256: plan.Started.SpecSHA256},
	}, wire.WorkflowType, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return api.Retried{}, notRetryable("retry %s: another run of %s started after run %s failed; see wend show %s", wid, wid, old.RunID, wid)
	}
	if err != nil {
		return api.Retried{}, clusterError(wid, err)
	}
	d, err := b.c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	if err != nil {
		return api.Retried{}, clusterError(wid, err)
	}
	return api.Retried{Run: runOf(d.GetWorkflowExecutionInfo()), RetryOf: old.RunID}, nil
}

// startInput reads the input a run started with from its first Temporal event.
func (b *Backend) startInput(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) (wire.StartInput, error) {
	e := info.GetExecution()
	it := b.c.GetWorkflowHistory(ctx, e.GetWorkflowId(), e.GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var in wire.StartInput
	if !it.HasNext() {
		return in, api.NewError(api.CodeInternal, fmt.Sprintf("read the start of run %s of %s: its history is empty", e.GetRunId(), e.GetWorkflowId()))
	}
	ev, err := it.Next()
	if err != nil {
		return in, clusterError(e.GetWorkflowId(), err)
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		return in, api.NewError(api.CodeInternal, fmt.Sprintf("read the start of run %s: its first event is %s", e.GetRunId(), ev.GetEventType()))
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &in); err != nil {
		return in, api.NewError(api.CodeInternal, fmt.Sprintf("read the start input of run %s: %v", e.GetRunId(), err))
	}
	return in, nil
}

func notRetryable(format string, args ...any) error {
	return api.NewError(api.CodeNotRetryable, fmt.Sprintf(format, args...))
}
