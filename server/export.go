package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
)

// Export returns the history export (wend.history-export/v1) of the newest run of workflow
// id id (or run id id), built from the same record and events Show reads. A history the
// export cannot read is CodeInternal: the store holds something this build cannot parse.
func (s *Server) Export(id string) (*export.Document, error) {
	if s.cluster != nil {
		return s.cluster.Export(id)
	}
	p, err := s.Events(id, 0)
	if err != nil {
		return nil, err
	}
	if p.Run.NeverStarted() {
		return nil, errorf(http.StatusConflict, api.CodeQueued, fmt.Sprintf("run %s of %s has no history to export: %s (wend show %s says more)",
			p.Run.RunID, p.Run.WorkflowID, unstartedWhy(p.Run), p.Run.WorkflowID))
	}
	doc, err := export.Build(p.Run, p.Events)
	if err != nil {
		return nil, wrap(fmt.Errorf("export run %s: %w", p.Run.RunID, err))
	}
	doc.ExportedAt = time.Now().UTC()
	// What Build cannot see in the history: the run's open tasks and the run it continued.
	tasks, err := tasksOfRun(s.store, p.Run.RunID)
	if err != nil {
		return nil, wrap(fmt.Errorf("export run %s: %w", p.Run.RunID, err))
	}
	for _, t := range tasks {
		doc.OpenTasks = append(doc.OpenTasks, export.OpenTask{ID: t.ID, Kind: string(t.Kind), AvailableAt: t.AvailableAt})
	}
	if prev := continuedFrom(s.store, p.Run); prev != "" {
		if doc.Links == nil {
			doc.Links = &export.Links{}
		}
		doc.Links.ContinuedFrom = prev
	}
	return doc, nil
}

// continuedFrom is the run of the same workflow id that continue-as-new ended just before
// run started, or "".
func continuedFrom(st history.Store, run history.Run) string {
	runs, err := st.Runs(history.RunFilter{WorkflowID: run.WorkflowID})
	if err != nil {
		return ""
	}
	for i, r := range runs { // newest first
		if r.RunID == run.RunID && i+1 < len(runs) && runs[i+1].Status == history.StatusContinued {
			return runs[i+1].RunID
		}
	}
	return ""
}

func (s *Server) exportRun(w http.ResponseWriter, r *http.Request) {
	doc, err := s.Export(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

// runTasker is a store that reads one run's tasks in short reads (boltstore), rather than
// every task in one.
type runTasker interface {
	TasksOfRun(runID string) ([]history.Task, error)
}

// tasksOfRun is the run's open tasks; damaged task records are wend check's to name.
func tasksOfRun(st history.Store, runID string) ([]history.Task, error) {
	if rt, ok := st.(runTasker); ok {
		return rt.TasksOfRun(runID)
	}
	tasks, err := st.Tasks()
	if d := (*history.DamagedTasksError)(nil); errors.As(err, &d) {
		err = nil // the sound ones are what the engine owes the run
	}
	return slices.DeleteFunc(tasks, func(t history.Task) bool { return t.RunID != runID }), err
}
