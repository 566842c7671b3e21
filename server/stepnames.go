package server

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// RunSpec is the workflow a run runs, from the spec text its WorkflowStarted recorded; nil for
// a history that does not start so or whose text no longer loads.
func RunSpec(events []history.Event) *spec.Workflow {
	if len(events) == 0 || events[0].Type != history.WorkflowStarted {
		return nil
	}
	st, err := history.DataOf[history.Started](events[0])
	if err != nil {
		return nil
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() || w == nil {
		return nil
	}
	return w
}

// StepIDs maps the run's step paths to their ids (spec.Workflow.StepIDs), for naming steps
// with history.StepName; empty when the run's spec cannot be read (steps are then named by
// place). events starts with the run's WorkflowStarted.
func StepIDs(events []history.Event) map[string]string {
	return RunSpec(events).StepIDs()
}
