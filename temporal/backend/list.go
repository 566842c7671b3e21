package backend

import (
	"fmt"
	"sort"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/api/workflowservice/v1"
)

// List returns the wend runs passing q (api.ListQuery.Match), newest first, at most
// limit (0: all). The workflow type, id and the statuses Temporal names alike are filtered
// by the cluster, and so are search clauses (searchClauses: the field's custom search
// attribute); the rest here, as the control API does, which also checks the search values
// the cluster returned (searchOf).
func (b *Backend) List(q api.ListQuery, limit int) ([]history.Run, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	query := listQuery(q)
	if len(q.Search) > 0 {
		types, err := b.searchTypes(ctx)
		if err != nil {
			return nil, err
		}
		clauses, err := searchClauses(q.Search, types)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		query += clauses
	}
	var runs []history.Run
	var token []byte
	for {
		resp, err := b.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: b.ns, Query: query, NextPageToken: token, PageSize: 1000})
		if err != nil {
			return nil, clusterError("", err)
		}
		for _, info := range resp.GetExecutions() {
			runs = append(runs, runOf(info))
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return filterRuns(runs, q, limit), nil
}

// listQuery is the visibility query for q: what Temporal can filter exactly.
func listQuery(q api.ListQuery) string {
	s := fmt.Sprintf("WorkflowType = '%s'", wire.WorkflowType)
	if q.WorkflowID != "" && quotable(q.WorkflowID) {
		s += fmt.Sprintf(" AND WorkflowId = '%s'", q.WorkflowID)
	}
	switch q.Status {
	case history.StatusRunning:
		s += " AND ExecutionStatus = 'Running'"
	case history.StatusCompleted:
		s += " AND ExecutionStatus = 'Completed'"
	case history.StatusContinued:
		s += " AND ExecutionStatus = 'ContinuedAsNew'"
	}
	return s
}

// filterRuns keeps the runs q matches, newest first (start time, then run id, as locally),
// at most limit of them; never nil.
func filterRuns(runs []history.Run, q api.ListQuery, limit int) []history.Run {
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].StartedAt.Equal(runs[j].StartedAt) {
			return runs[i].StartedAt.After(runs[j].StartedAt)
		}
		return runs[i].RunID > runs[j].RunID
	})
	out := []history.Run{}
	for _, r := range runs {
		if limit > 0 && len(out) == limit {
			break
		}
		if q.Match(r) {
			out = append(out, r)
		}
	}
	return out
}
