package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

// Memo keys: what a list shows without asking a worker (wire.Memo*).
const (
	memoName       = wire.MemoName
	memoSpecFile   = wire.MemoSpecFile
	memoSpecSHA256 = wire.MemoSpecSHA256
	memoReason     = wire.MemoClosedReason // the driver writes it when the run closes
)

// statusOf maps Temporal's execution status to wend's status and closed reason. A wend run
// that failed, timed out or failed its compensation all end as Temporal Failed; the memo's
// closed_reason, or the terminal event, says which.
func statusOf(s enumspb.WorkflowExecutionStatus) (status, reason string) {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return history.StatusRunning, ""
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return history.StatusCompleted, history.ClosedCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return history.StatusCancelled, history.ClosedCancelled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return history.StatusCancelled, history.ClosedTerminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return history.StatusContinued, history.ClosedContinued
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return history.StatusFailed, history.ClosedTimedOut
	}
	return history.StatusFailed, history.ClosedFailed
}

// runOf is the wend run record a workflow execution's visibility gives: ids, status, times,
// and the spec from the memo. LastSeq is unknown here (0); the events tell it.
func runOf(info *workflowpb.WorkflowExecutionInfo) history.Run {
	r := history.Run{
		WorkflowID: info.GetExecution().GetWorkflowId(),
		RunID:      info.GetExecution().GetRunId(),
		Name:       memoString(info.GetMemo(), memoName),
		SpecFile:   memoString(info.GetMemo(), memoSpecFile),
		SpecSHA256: memoString(info.GetMemo(), memoSpecSHA256),
		Search:     searchOf(info.GetSearchAttributes()),
	}
	r.Status, r.ClosedReason = statusOf(info.GetStatus())
	if why := memoString(info.GetMemo(), memoReason); why != "" && r.Status == history.StatusFailed {
		r.ClosedReason = why
	}
	if p := info.GetParentExecution(); p != nil {
		r.ParentRunID = p.GetRunId()
	}
	if t := info.GetStartTime(); t != nil {
		r.StartedAt = t.AsTime().UTC()
	}
	if t := info.GetCloseTime(); t != nil && r.Status != history.StatusRunning {
		r.ClosedAt = t.AsTime().UTC()
	}
	return r
}

func memoString(m *commonpb.Memo, key string) string {
	p := m.GetFields()[key]
	if p == nil {
		return ""
	}
	var s string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
		return ""
	}
	return s
}

// withEvents completes a record from the run's wend history: the spec and parent from its
// WorkflowStarted, the status and closed reason from its terminal event, its event count.
// Start and close times stay Temporal's, so list and show agree (wend's event times are
// workflow-task times, a little later).
// A run Temporal closed without workflow code (terminate, a server timeout, a failed
// workflow task) has no wend terminal event: one is made up from Temporal's status, dated
// at its close, so the history ends as a local one does.
func withEvents(r history.Run, events []history.Event) (history.Run, []history.Event) {
	if len(events) > 0 && events[0].Type == history.WorkflowStarted {
		if st, err := history.DataOf[history.Started](events[0]); err == nil {
			r.SpecFile, r.SpecSHA256 = st.SpecFile, st.SpecSHA256
			r.ParentRunID, r.ParentStep = st.ParentRunID, st.ParentStep
			if r.Name == "" {
				if w, _ := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource)); w != nil {
					r.Name = w.Name
				}
			}
		}
	}
	last := history.Event{}
	if n := len(events); n > 0 {
		last = events[n-1]
	}
	switch {
	case last.Type.Terminal():
		r.Status, r.ClosedReason = history.ClosedBy(last)
		if r.ClosedAt.IsZero() {
			r.ClosedAt = last.Time
		}
	case r.Status != history.StatusRunning:
		events = append(events, synthesized(r, last.Seq))
	}
	r.LastSeq = uint64(len(events))
	return r, events
}

// synthesized is the terminal event of a run Temporal closed with no workflow code running.
func synthesized(r history.Run, lastSeq uint64) history.Event {
	t, f := history.WorkflowFailed, &history.Failure{Category: history.CategoryInternal, PropagationKind: "step",
		Message: "Temporal closed the run with status " + r.Status + " (" + r.ClosedReason + ") without wend deciding it"}
	switch r.ClosedReason {
	case history.ClosedTerminated:
		t, f = history.WorkflowTerminated, &history.Failure{Category: history.CategoryTerminated, PropagationKind: "cancelled",
			Message: "the run was terminated on Temporal"}
	case history.ClosedCancelled:
		t, f = history.WorkflowCancelled, &history.Failure{Category: history.CategoryCancelled, PropagationKind: "cancelled",
			Message: "the run was cancelled on Temporal"}
	case history.ClosedTimedOut:
		t, f = history.WorkflowTimedOut, &history.Failure{Category: history.CategoryTimeout, PropagationKind: "timeout",
			Message: "Temporal timed the run out"}
	case history.ClosedCompleted, history.ClosedContinued:
		t = history.WorkflowFailed // cannot be: wend decides these; say so rather than guess an output
	}
	return history.Event{Seq: lastSeq + 1, Type: t, Time: r.ClosedAt, Data: history.MustData(history.Closed{Failure: f})}
}

// Resolve returns the record of the run id names: the newest run of a workflow id, else a run
// id (server.Cluster).
func (b *Backend) Resolve(id string) (history.Run, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	info, err := b.resolve(ctx, id)
	if err != nil {
		return history.Run{}, err
	}
	return runOf(info), nil
}

// resolve finds the run id names, as locally: the newest run of workflow id id, else the
// run whose run id is id.
func (b *Backend) resolve(ctx context.Context, id string) (*workflowpb.WorkflowExecutionInfo, error) {
	if id == "" {
		return nil, notFound(id)
	}
	d, err := b.c.DescribeWorkflowExecution(ctx, id, "")
	if err == nil {
		return wendOnly(id, d.GetWorkflowExecutionInfo())
	}
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return nil, clusterError(id, err)
	}
	if !quotable(id) {
		return nil, notFound(id)
	}
	resp, err := b.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: b.ns, PageSize: 2,
		Query: fmt.Sprintf("WorkflowType = '%s' AND RunId = '%s'", wire.WorkflowType, id)})
	if err != nil {
		return nil, clusterError(id, err)
	}
	if len(resp.GetExecutions()) == 0 {
		return nil, notFound(id)
	}
	e := resp.GetExecutions()[0].GetExecution()
	d, err = b.c.DescribeWorkflowExecution(ctx, e.GetWorkflowId(), e.GetRunId())
	if err != nil {
		return nil, clusterError(id, err)
	}
	return wendOnly(id, d.GetWorkflowExecutionInfo())
}

// wendOnly refuses a workflow that is not a wend run: its history is not wend's to show.
func wendOnly(id string, info *workflowpb.WorkflowExecutionInfo) (*workflowpb.WorkflowExecutionInfo, error) {
	if t := info.GetType().GetName(); t != wire.WorkflowType {
		return nil, fmt.Errorf("workflow %q is a %s workflow, not a wend run (%s)", id, t, wire.WorkflowType)
	}
	return info, nil
}

// quotable reports whether s can sit inside a quoted visibility query value as is.
func quotable(s string) bool { return !strings.ContainsAny(s, `'"\`) }
