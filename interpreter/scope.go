package interpreter

import (
	"encoding/json"
	"fmt"
	"maps"
)

// scope holds the names an expression sees beyond input/state/run: loop variables, catch's
// error, and the outputs of steps with ids. A for_each item gets its own scope, so
// steps.ID inside a loop body reads the current item's step.
type scope struct {
	parent *scope
	vars   map[string]any
	steps  *table[any]    // step id -> its output; nil: writes go to the parent's
	state  map[string]any // non-nil in a compensation: the snapshot its expressions see

	loopStatic, loopInstance string // the for_each item this scope belongs to (paths)
}

func (sc *scope) child(vars map[string]any) *scope {
	return &scope{parent: sc, vars: vars, loopStatic: sc.loopStatic, loopInstance: sc.loopInstance}
}

// setStep records a step's output in the nearest scope that owns a steps map. What an
// expression reads as steps.ID, {"output": out}, is made when an expression names the step
// (stepView), not for every step with an id.
func (sc *scope) setStep(id string, out any) {
	for s := sc; s != nil; s = s.parent {
		if s.steps != nil {
			s.steps.set(id, out)
			return
		}
	}
}

// stepView is what expressions see as steps.ID of a step whose output is out.
func stepView(out any) map[string]any { return map[string]any{"output": out} }

// instancePath turns a step's static path into the path of this occurrence: inside a
// for_each item, "steps[2].steps[0]" becomes "steps[2]@3.steps[0]".
func (sc *scope) instancePath(static string) string {
	if sc.loopStatic == "" || len(static) < len(sc.loopStatic) || static[:len(sc.loopStatic)] != sc.loopStatic {
		return static
	}
	return sc.loopInstance + static[len(sc.loopStatic):]
}

// env builds the evaluation environment; inner names shadow outer ones. Only the step
// outputs the expressions read (refs) are put in `steps`, so building it costs what the
// expression uses, not the number of steps that ran before it.
func (r *Run) env(sc *scope, refs []string, extra map[string]any) map[string]any {
	state := r.state
	for s := sc; s != nil; s = s.parent {
		if s.state != nil {
			state = s.state
			break
		}
	}
	env := map[string]any{
		"input": r.inputValue(),
		"state": state,
		"run":   r.runEnv(),
	}
	chain := make([]*scope, 0, 8) // on the stack for the usual depth
	for s := sc; s != nil; s = s.parent {
		chain = append(chain, s)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		maps.Copy(env, chain[i].vars)
	}
	steps := make(map[string]any, len(refs))
	for _, id := range refs {
		for _, s := range chain {
			if s.steps == nil {
				continue
			}
			if out, ok := s.steps.get(id); ok {
				steps[id] = stepView(out)
				break
			}
		}
	}
	env["steps"] = steps
	maps.Copy(env, extra)
	return env
}

// inputValue is what expressions read as `input`: the run's input, decoded again from its JSON
// if the run dropped it while it waited (Apply).
func (r *Run) inputValue() any {
	if !r.inputDecoded {
		var v any
		if err := json.Unmarshal(r.inputJSON, &v); err != nil {
			panic(fmt.Sprintf("interpreter: the input decoded at the run's start no longer decodes: %v", err))
		}
		r.input, r.inputDecoded = v, true
	}
	return r.input
}

// runEnv is what expressions read as `run`: the run's ids, one map for every evaluation
// (expressions never write into their environment's values), made again only if the ids it
// was made from changed or the run dropped it while it waited (Apply).
func (r *Run) runEnv() map[string]any {
	if m := r.runVars; m != nil && m["workflow_id"] == r.info.WorkflowID && m["run_id"] == r.info.RunID {
		return m
	}
	r.runVars = map[string]any{"workflow_id": r.info.WorkflowID, "run_id": r.info.RunID}
	return r.runVars
}
