package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/internal/closing"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// Signal sends a wend signal to the open run id names.
func (b *Backend) Signal(ctx context.Context, id, name string, data json.RawMessage) (history.Run, error) {
	sent, err := b.SendSignal(ctx, id, api.SignalRequest{Name: name, Data: data})
	return sent.Run, err
}

// SendSignal sends a wend signal on wire.SignalName; the run keeps signal ids it has seen,
// so a resend with the same id reaches it once. With an id, the run's wend history is read
// first (the wend.events query): an id it recorded is answered Duplicate, open run or closed,
// and not sent again, as locally. Two sends racing with one new id both
// reach the workflow, which records the first, and both answer not Duplicate.
func (b *Backend) SendSignal(ctx context.Context, id string, req api.SignalRequest) (api.SignalSent, error) {
	if req.Name == "" {
		return api.SignalSent{}, api.NewError(api.CodeBadRequest, "signal: no signal name given")
	}
	if len(req.Data) > 0 && !json.Valid(req.Data) {
		return api.SignalSent{}, api.NewError(api.CodeBadRequest, "signal: data is not JSON")
	}
	if req.ID != "" {
		if r, seen := b.signalSeen(ctx, id, req.ID); seen {
			return api.SignalSent{Run: r, Duplicate: true}, nil
		}
	}
	r, err := b.control(ctx, id, "signals to a finished run are rejected", func(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) error {
		if err := b.checkContract(ctx, info, req); err != nil {
			return err
		}
		e := info.GetExecution()
		return b.c.SignalWorkflow(ctx, e.GetWorkflowId(), e.GetRunId(), wire.SignalName, wire.Signal{Name: req.Name, Data: req.Data, SignalID: req.ID})
	})
	return api.SignalSent{Run: r}, err
}

// checkContract refuses, before anything is sent, a signal the run's workflow does not
// declare or whose data fails its declared schema (spec `signals:`), as the local engine
// does: the run's start input carries its spec text. A start input that cannot be read is an
// error, not a pass: the workflow would record whatever it was sent.
func (b *Backend) checkContract(ctx context.Context, info *workflowpb.WorkflowExecutionInfo, req api.SignalRequest) error {
	in, err := b.startInput(ctx, info)
	if err != nil {
		return err
	}
	st := in.Started
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if w == nil || ds.HasErrors() {
		return api.NewError(api.CodeInternal, fmt.Sprintf("signal run %s: its recorded workflow %s does not load: %v",
			info.GetExecution().GetRunId(), st.SpecFile, ds.Error()))
	}
	err = w.CheckSignal(req.Name, req.Data)
	if err == nil {
		return nil
	}
	code := api.CodeBadSignal
	if errors.Is(err, spec.ErrUndeclaredSignal) {
		code = api.CodeUnknownSignal
	}
	e := info.GetExecution()
	return api.NewError(code, fmt.Sprintf("run %s of %s: %v", e.GetRunId(), e.GetWorkflowId(), err))
}

// signalSeen says whether the run id names recorded a signal with client id signalID, with
// the run's record. Only that run's history is read, not earlier runs of a continue-as-new
// chain (locally every run of the workflow id is). A history that cannot be read (no worker
// answers) says no: an open run is then signalled and drops the resend itself, a closed one
// refuses it as closed.
func (b *Backend) signalSeen(ctx context.Context, id, signalID string) (history.Run, bool) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	info, err := b.resolve(ctx, id)
	if err != nil {
		return history.Run{}, false
	}
	evs, _, err := b.events(ctx, info, 0)
	if err != nil {
		return history.Run{}, false
	}
	for _, ev := range evs {
		if ev.Type != history.SignalReceived {
			continue
		}
		if s, err := history.DataOf[history.Signal](ev); err == nil && s.SignalID == signalID {
			r, _ := withEvents(runOf(info), evs)
			return r, true
		}
	}
	return history.Run{}, false
}

// Cancel sends the reason on wire.CancelSignalName (Temporal's cancel carries none), then
// cancels: the run records CancelRequested with the reason and compensates as locally.
func (b *Backend) Cancel(ctx context.Context, id, reason string) (history.Run, error) {
	return b.control(ctx, id, "a finished run cannot be cancelled", func(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) error {
		e := info.GetExecution()
		if err := b.c.SignalWorkflow(ctx, e.GetWorkflowId(), e.GetRunId(), wire.CancelSignalName, wire.Cancel{Reason: reason}); err != nil {
			return err
		}
		return b.c.CancelWorkflow(ctx, e.GetWorkflowId(), e.GetRunId())
	})
}

// Terminate ends the run at once on the server: no workflow code runs, so no compensation;
// its history ends with a WorkflowTerminated this backend adds when reading it.
func (b *Backend) Terminate(ctx context.Context, id, reason string) (history.Run, error) {
	return b.control(ctx, id, "a finished run cannot be terminated", func(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) error {
		e := info.GetExecution()
		if reason == "" {
			reason = "wend terminate"
		}
		return b.c.TerminateWorkflow(ctx, e.GetWorkflowId(), e.GetRunId(), reason)
	})
}

// control resolves id, refuses a closed run with the local message, sends, and returns the
// run's record afterwards.
func (b *Backend) control(ctx context.Context, id, closedWhy string, send func(context.Context, *workflowpb.WorkflowExecutionInfo) error) (history.Run, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	info, err := b.resolve(ctx, id)
	if err != nil {
		return history.Run{}, err
	}
	r := runOf(info)
	if !r.Open() {
		return r, closedError(r, closedWhy)
	}
	if err := send(ctx, info); err != nil {
		if now, rerr := b.resolve(ctx, id); rerr == nil && !runOf(now).Open() {
			return runOf(now), closedError(runOf(now), closedWhy) // it closed meanwhile
		}
		return r, clusterError(id, err)
	}
	e := info.GetExecution()
	if d, err := b.c.DescribeWorkflowExecution(ctx, e.GetWorkflowId(), e.GetRunId()); err == nil {
		r = runOf(d.GetWorkflowExecutionInfo())
	}
	return r, nil
}

// Repair does not apply: the cluster's history is the record, there is no local index to rebuild.
func (b *Backend) Repair(context.Context, string) (api.RepairReport, error) {
	return api.RepairReport{}, api.NewError(api.CodeUnsupported,
		"wend repair rebuilds a local database's records; on Temporal the cluster's history is the record and there is nothing to repair")
}

// Wait blocks until the workflow id names has closed for good (following continue-as-new)
// or timeout passed, and returns the last run's record with its output or failure.
func (b *Backend) Wait(ctx context.Context, id string, timeout time.Duration) (api.Outcome, error) {
	rctx, cancel := context.WithTimeout(ctx, b.timeout)
	info, err := b.resolve(rctx, id)
	cancel()
	if err != nil {
		return api.Outcome{}, err
	}
	if timeout <= 0 || timeout > server.MaxWait {
		timeout = server.MaxWait
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wid := info.GetExecution().GetWorkflowId()
	var out json.RawMessage
	gerr := b.c.GetWorkflow(wctx, wid, "").Get(wctx, &out)
	status, reason, c, closed := closing.Of(out, gerr)
	rctx, cancel2 := context.WithTimeout(ctx, b.timeout)
	defer cancel2()
	now, err := b.resolveWorkflow(rctx, wid)
	if err != nil {
		return api.Outcome{}, err
	}
	r := runOf(now)
	if !closed {
		if ctx.Err() == nil && (wctx.Err() != nil || pollExpired(gerr)) {
			return api.Outcome{Run: r}, nil // the timeout came first
		}
		return api.Outcome{}, clusterError(id, gerr)
	}
	r.Status, r.ClosedReason = status, reason
	return api.Outcome{Run: r, Closed: true, Output: c.Output, Failure: c.Failure}, nil
}

// pollExpired tells a long poll that ended on its deadline: the server may answer
// DeadlineExceeded a moment before the client's own context expires, and a run still open
// then is "not closed yet", not a cluster error.
func pollExpired(err error) bool {
	var de *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &de)
}

// Check reports whether workers poll the task queue: without one, nothing runs.
func (b *Backend) Check() (api.CheckReport, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	rep := api.CheckReport{Problems: []string{}}
	for _, k := range []struct {
		t    enumspb.TaskQueueType
		what string
	}{{enumspb.TASK_QUEUE_TYPE_WORKFLOW, "workflow"}, {enumspb.TASK_QUEUE_TYPE_ACTIVITY, "activity"}} {
		d, err := b.c.DescribeTaskQueue(ctx, b.tq, k.t)
		if err != nil {
			return rep, clusterError("", err)
		}
		if len(d.GetPollers()) == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("task queue %s of namespace %s: no worker polls for %s tasks; runs wait until one does (wend worker --temporal ADDR --task-queue %s)", b.tq, b.ns, k.what, b.tq))
		}
	}
	n, err := b.c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: b.ns,
		Query: fmt.Sprintf("WorkflowType = '%s'", wire.WorkflowType)})
	if err != nil {
		return rep, clusterError("", err)
	}
	rep.Runs = int(n.GetCount())
	return rep, nil
}
