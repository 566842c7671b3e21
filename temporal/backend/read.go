package backend

import (
	"context"
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/temporal/wire"
	workflowpb "go.temporal.io/api/workflow/v1"
)

// pageBytes is how much of a run's history one wend.events query asks for.
const pageBytes = 1 << 20

// events reads a run's wend history after seq after, page by page, from its workflow (a
// worker replays a closed run to answer).
func (b *Backend) events(ctx context.Context, info *workflowpb.WorkflowExecutionInfo, after uint64) ([]history.Event, uint64, error) {
	wid, rid := info.GetExecution().GetWorkflowId(), info.GetExecution().GetRunId()
	out := []history.Event{}
	for {
		v, err := b.c.QueryWorkflow(ctx, wid, rid, wire.QueryEvents, wire.EventsQuery{After: after, MaxBytes: pageBytes})
		if err != nil {
			return nil, 0, api.NewError(api.CodeInternal, fmt.Sprintf(
				"read the history of run %s of %s: %v (a worker of task queue %s answers this query: is one running? wend worker --temporal ADDR)",
				rid, wid, err, info.GetTaskQueue()))
		}
		var p wire.EventsPage
		if err := v.Get(&p); err != nil {
			return nil, 0, api.NewError(api.CodeInternal, fmt.Sprintf("read the history of run %s: %v", rid, err))
		}
		out = append(out, p.Events...)
		if len(p.Events) > 0 {
			after = p.Events[len(p.Events)-1].Seq
		}
		if !p.More || len(p.Events) == 0 {
			return out, p.Total, nil
		}
	}
}

// read is a run's record and its whole wend history, settled by withEvents.
func (b *Backend) read(ctx context.Context, id string) (history.Run, []history.Event, *workflowpb.WorkflowExecutionInfo, error) {
	info, err := b.resolve(ctx, id)
	if err != nil {
		return history.Run{}, nil, nil, err
	}
	evs, _, err := b.events(ctx, info, 0)
	if err != nil {
		return history.Run{}, nil, nil, err
	}
	r, evs := withEvents(runOf(info), evs)
	return r, evs, info, nil
}

// Events returns the events after seq after of the run id names, with its record.
func (b *Backend) Events(id string, after uint64) (api.EventPage, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	info, err := b.resolve(ctx, id)
	if err != nil {
		return api.EventPage{}, err
	}
	if r := runOf(info); r.Open() {
		// Only the new events: a followed run is asked every second.
		evs, total, err := b.events(ctx, info, after)
		if err != nil {
			return api.EventPage{}, err
		}
		r.LastSeq = total
		return api.EventPage{Run: r, Events: evs}, nil
	}
	r, evs, _, err := b.read(ctx, id)
	if err != nil {
		return api.EventPage{}, err
	}
	tail := []history.Event{}
	for _, ev := range evs {
		if ev.Seq > after {
			tail = append(tail, ev)
		}
	}
	return api.EventPage{Run: r, Events: tail}, nil
}

// Show returns the run detail, as locally (runview.DetailOf over the same record and events).
func (b *Backend) Show(id string) (api.RunDetail, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	r, evs, _, err := b.read(ctx, id)
	if err != nil {
		return api.RunDetail{}, err
	}
	return runview.DetailOf(r, evs), nil
}

// Export returns wend.history-export/v1 of the run, naming Temporal as its engine.
func (b *Backend) Export(id string) (*export.Document, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	r, evs, info, err := b.read(ctx, id)
	if err != nil {
		return nil, err
	}
	return exportOf(r, evs, b.ns, info.GetTaskQueue())
}

// exportOf builds the export and adds the engine it ran on.
func exportOf(r history.Run, evs []history.Event, namespace, taskQueue string) (*export.Document, error) {
	doc, err := export.Build(r, evs)
	if err != nil {
		return nil, api.NewError(api.CodeInternal, fmt.Sprintf("export run %s: %v", r.RunID, err))
	}
	doc.Workflow.Engine = &export.Engine{Kind: "temporal", Namespace: namespace, TaskQueue: taskQueue}
	return doc, nil
}

// Query evaluates a read-only expression over the run's wend history, as locally
// (server.RunQuery over the same record and events).
func (b *Backend) Query(id, expr string) (api.QueryResult, error) {
	if err := server.CheckQuery(expr); err != nil {
		return api.QueryResult{}, err
	}
	ctx, cancel := b.ctx()
	defer cancel()
	r, evs, _, err := b.read(ctx, id)
	if err != nil {
		return api.QueryResult{}, err
	}
	return server.RunQuery(r, evs, expr)
}
