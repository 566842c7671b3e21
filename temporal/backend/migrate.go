package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/temporal/wire"
	workflowpb "go.temporal.io/api/workflow/v1"
)

// Migrate moves the open run id names to req.Source (wend migrate --temporal). The check is
// the workflow's own: the backend sends wire.MigrateSignalName and reads the verdict with
// the wire.QueryMigration query once a worker has applied it; the run moves only if its
// history, at the point the signal reaches it, replays on the new text. A dry run checks here,
// on the run's history as the wend.events query gives it, and sends nothing.
func (b *Backend) Migrate(ctx context.Context, id string, req api.MigrateRequest) (api.MigrateResult, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	info, err := b.resolve(ctx, id)
	if err != nil {
		return api.MigrateResult{}, err
	}
	r := runOf(info)
	res := api.MigrateResult{Run: r, FromSHA256: r.SpecSHA256, ToSHA256: history.SpecSHA256([]byte(req.Source))}
	if !r.Open() {
		return res, closedError(r, "a finished run keeps the file it ran on")
	}
	nw, ds := (&spec.Loader{SkipChildren: true}).Load(r.SpecFile, []byte(req.Source))
	if nw == nil || ds.HasErrors() {
		return res, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("migrate %s: the workflow file is invalid:\n%s", id, ds.Error()))
	}
	if res.FromSHA256 == res.ToSHA256 {
		res.Already = true
		return res, nil
	}
	if req.DryRun {
		return b.checkMigration(ctx, info, nw, res)
	}
	file := req.File
	if file == "" {
		file = r.SpecFile
	}
	specs, err := Bundle(file, []byte(req.Source), spec.ReadWorkflowFile)
	if err != nil {
		return res, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("migrate %s: %v", id, err))
	}
	m := wire.Migrate{ID: randomHex(8), Source: req.Source, File: req.File, By: req.By, Specs: specs}
	e := info.GetExecution()
	if err := b.c.SignalWorkflow(ctx, e.GetWorkflowId(), e.GetRunId(), wire.MigrateSignalName, m); err != nil {
		return res, clusterError(id, err)
	}
	v, err := b.verdict(ctx, info, m.ID)
	if err != nil {
		return res, err
	}
	if d, err := b.c.DescribeWorkflowExecution(ctx, e.GetWorkflowId(), e.GetRunId()); err == nil {
		res.Run = runOf(d.GetWorkflowExecutionInfo())
	}
	res.Moved, res.Already = v.Moved, v.Already
	if d := v.Divergence; d != nil {
		res.Divergence = &api.Divergence{Seq: d.Seq, Recorded: d.Recorded, Step: d.Step, Decided: d.Decided, At: d.At, Reason: d.Reason}
	}
	if v.Error != "" {
		return res, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("migrate %s: %s", id, v.Error))
	}
	return res, nil
}

// checkMigration is a dry run: the check on the run's history as recorded now.
func (b *Backend) checkMigration(ctx context.Context, info *workflowpb.WorkflowExecutionInfo, nw *spec.Workflow, res api.MigrateResult) (api.MigrateResult, error) {
	if runOf(info).Name != nw.Name {
		return res, api.NewError(api.CodeBadWorkflow, fmt.Sprintf("migrate: run %s runs workflow %q, and the text is workflow %q", res.Run.RunID, res.Run.Name, nw.Name))
	}
	evs, _, err := b.events(ctx, info, 0)
	if err != nil {
		return res, err
	}
	d, err := interpreter.Diverge(nw, evs)
	if err != nil {
		return res, api.NewError(api.CodeInternal, fmt.Sprintf("migrate: run %s: %v", res.Run.RunID, err))
	}
	if d != nil {
		res.Divergence = &api.Divergence{Seq: d.Seq, Recorded: string(d.Recorded), Step: d.Step, Decided: string(d.Decided), At: d.At, Reason: d.Reason}
	}
	return res, nil
}

// verdict asks the run for a migration's verdict until a worker has applied the signal.
func (b *Backend) verdict(ctx context.Context, info *workflowpb.WorkflowExecutionInfo, id string) (wire.MigrateVerdict, error) {
	e := info.GetExecution()
	for {
		q, err := b.c.QueryWorkflow(ctx, e.GetWorkflowId(), e.GetRunId(), wire.QueryMigration, id)
		var v wire.MigrateVerdict
		if err == nil {
			if err = q.Get(&v); err == nil && v.Seen {
				return v, nil
			}
		}
		select {
		case <-ctx.Done():
			why := "no worker applied it in time"
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				why = err.Error()
			}
			return v, api.NewError(api.CodeBlocked, fmt.Sprintf("migrate %s: the move was sent (migration %s) but %s: the run moves, or stays, when a worker of its task queue applies it; wend history %s shows WorkflowMigrated once it has moved", e.GetWorkflowId(), id, why, e.GetWorkflowId()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
