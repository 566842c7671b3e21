package runview

import (
	"encoding/json"
	"fmt"

	"github.com/wendflow/wend/history"
)

// Purposes of the workflow deadline timers (the interpreter's timeout kinds).
const (
	purposeRunTimeout       = "run_timeout"
	purposeExecutionTimeout = "execution_timeout"
)

func (v *View) workflowStarted(ev history.Event) error {
	st, err := history.DataOf[history.Started](ev)
	if err != nil {
		return err
	}
	v.started, v.RetryOf = st, st.RetryOf
	w := &v.Workflow
	w.WorkflowID, w.RunID, w.SpecFile, w.SpecSHA256 = st.WorkflowID, st.RunID, st.SpecFile, st.SpecSHA256
	w.ParentRunID, w.ParentStep = st.ParentRunID, st.ParentStep
	w.StartedAt, w.ExecutionStartedAt = ev.Time, st.ExecutionStarted
	w.Input = orNull(st.Input)
	return nil
}

func (v *View) closed(ev history.Event) error {
	c, err := history.DataOf[history.Closed](ev)
	if err != nil {
		return err
	}
	w := &v.Workflow
	w.ClosedAt, v.output = ev.Time, c.Output
	w.Status, w.ClosedReason = history.ClosedBy(ev)
	if ev.Type == history.WorkflowCompleted {
		w.Output = orNull(c.Output)
	}
	if c.Failure != nil {
		w.Failure = v.failure(ev, *c.Failure)
	}
	w.TimeoutKind = c.TimeoutKind
	w.Uncompensated = c.Uncompensated
	if ev.Type == history.WorkflowContinuedAsNew {
		w.NextRunID = c.RunID
	}
	return nil
}

// workflowRecord merges the run record into the workflow section once every event is read.
func (v *View) workflowRecord(run history.Run) error {
	w := &v.Workflow
	if run.RunID != "" && w.RunID != "" && run.RunID != w.RunID {
		return fmt.Errorf("run record %s does not match the history of run %s", run.RunID, w.RunID)
	}
	w.Name = run.Name
	w.WorkflowID = first(w.WorkflowID, run.WorkflowID)
	w.RunID = first(w.RunID, run.RunID)
	w.SpecFile = first(w.SpecFile, run.SpecFile)
	w.SpecSHA256 = first(w.SpecSHA256, run.SpecSHA256)
	w.ParentRunID = first(w.ParentRunID, run.ParentRunID)
	w.ParentStep = first(w.ParentStep, run.ParentStep)
	if run.Status != "" {
		w.Status, w.ClosedReason = run.Status, first(run.ClosedReason, w.ClosedReason)
	}
	if w.Status == "" {
		w.Status = history.StatusRunning
	}
	if w.ClosedAt.IsZero() {
		w.ClosedAt = run.ClosedAt
	}
	w.Timeouts = v.timeouts()
	return nil
}

// timeouts reads the workflow deadlines from their timers: the deadline is the timer's
// fire_at, the limit that deadline minus the start it counts from.
func (v *View) timeouts() *Timeouts {
	var ts Timeouts
	w := v.Workflow
	for _, t := range v.Timers {
		if t.Step != "" {
			continue // a step's own timer that happens to share a purpose name
		}
		switch t.Purpose {
		case purposeRunTimeout:
			ts.Run = &Deadline{Seconds: t.FireAt.Sub(w.StartedAt).Seconds(), Deadline: t.FireAt, Status: t.Status}
		case purposeExecutionTimeout:
			from := w.ExecutionStartedAt
			if from.IsZero() {
				from = w.StartedAt
			}
			ts.Execution = &Deadline{Seconds: t.FireAt.Sub(from).Seconds(), Deadline: t.FireAt, Status: t.Status}
		}
	}
	if ts.Run == nil && ts.Execution == nil {
		return nil
	}
	return &ts
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// orNull keeps "no value" explicit: the schema wants input and output to be JSON values.
func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}
