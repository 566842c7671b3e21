package runview

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// SpecOf is the workflow a run runs, from the spec text its WorkflowStarted recorded; nil for
// an event that is not one or whose text no longer loads (children are not loaded).
func SpecOf(started history.Event) *spec.Workflow {
	if started.Type != history.WorkflowStarted {
		return nil
	}
	st, err := history.DataOf[history.Started](started)
	if err != nil {
		return nil
	}
	return loadSpec(st.SpecFile, st.SpecSource)
}

// loadSpec loads a recorded spec text without its children; nil when it does not load.
func loadSpec(file, source string) *spec.Workflow {
	w, ds := (&spec.Loader{SkipChildren: true}).Load(file, []byte(source))
	if ds.HasErrors() || w == nil {
		return nil
	}
	return w
}

// SpecNow is the workflow a run runs now: SpecOf its first event, or the text its last
// WorkflowMigrated moved it to; nil when that text does not load.
func SpecNow(events []history.Event) *spec.Workflow {
	if len(events) == 0 || events[0].Type != history.WorkflowStarted {
		return nil
	}
	st, err := history.DataOf[history.Started](events[0])
	if err == nil {
		st, err = history.CurrentSpec(st, events)
	}
	if err != nil {
		return nil
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() || w == nil {
		return nil
	}
	return w
}

// Spec is the workflow the run runs (the text its WorkflowStarted recorded, or the one its
// last WorkflowMigrated moved it to), loaded once; nil when its text no longer loads.
func (v *View) Spec() *spec.Workflow {
	if !v.specLoaded {
		load := loadSpec
		if v.specs != nil {
			load = v.specs.load
		}
		v.specLoaded = true
		if st, err := history.DataOf[history.Started](v.Events[0]); err == nil && v.Events[0].Type == history.WorkflowStarted {
			v.spec = load(st.SpecFile, st.SpecSource)
		}
		if v.started.SpecSource != "" && v.started.SpecSHA256 != v.Workflow.SpecSHA256 {
			v.spec = load(v.started.SpecFile, v.started.SpecSource)
		}
	}
	return v.spec
}

// StepIDs maps the run's static step paths to their ids (empty when the spec cannot be read:
// steps are then named by place).
func (v *View) StepIDs() map[string]string {
	if v.ids == nil {
		v.ids = v.Spec().StepIDs()
	}
	return v.ids
}

// Name names the step at a positional path for a person (StepName with the run's ids).
func (v *View) Name(path string) string { return StepName(path, v.StepIDs()) }

// Open reports whether the run is still open, by its record or, without one, its events.
func (v *View) Open() bool { return v.Workflow.Status == history.StatusRunning }
