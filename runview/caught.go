package runview

import (
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// markCaught marks the failures a catch handled. A failure that ends a step (not one try of
// an activity) goes up through the step's parents until a step with a catch takes it: the
// interpreter runs a step's catch on any failure of that step. A failure inside a catch
// passes that catch's owner by; one inside a compensation stays there.
func (v *View) markCaught() {
	var catches map[string]bool
	for i := range v.Failures {
		f := &v.Failures[i]
		if !endsStep(history.EventType(f.EventType)) || f.Step == "" {
			continue
		}
		if catches == nil {
			catches = CatchPaths(v.Spec())
		}
		f.Caught = caughtAt(StaticPath(f.Step), catches)
	}
}

// CatchPaths are the static paths of w's steps that have a catch (none for a nil w).
func CatchPaths(w *spec.Workflow) map[string]bool {
	catches := map[string]bool{}
	if w != nil {
		w.Walk(func(s *spec.Step) {
			if len(s.Catch) > 0 {
				catches[s.Path] = true
			}
		})
	}
	return catches
}

// Caught reports whether ev recorded a failure that ended its step and that a catch handles
// (catches from CatchPaths): the run goes on.
func Caught(ev history.Event, catches map[string]bool) bool {
	return endsStep(ev.Type) && ev.Step != "" && caughtAt(StaticPath(ev.Step), catches)
}

// endsStep reports whether an event of type t records the failure that ended a step.
func endsStep(t history.EventType) bool {
	switch t {
	case history.ActivityFailed, history.StepFailed, history.ChildWorkflowFailed, history.WorkflowWaitFailed:
		return true
	}
	return false
}

// caughtAt reports whether a failure of the step at static path reaches a step with a catch.
func caughtAt(path string, catches map[string]bool) bool {
	for path != "" {
		if catches[path] {
			return true
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			return false
		}
		owner, last := path[:i], path[i+1:]
		switch {
		case strings.HasPrefix(last, "compensate_with"):
			return false
		case strings.HasPrefix(last, "catch"):
			// The owner's catch is what failed: the failure goes on to the owner's parent.
			j := strings.LastIndexByte(owner, '.')
			if j < 0 {
				return false
			}
			owner = owner[:j]
		}
		path = owner
	}
	return false
}
