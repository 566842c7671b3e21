package interpreter

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// ErrQueryFailed is Query's error when the expression compiled but cannot be answered from
// this run: it reads a step output the run has not recorded, or its evaluation fails.
var ErrQueryFailed = errors.New("query failed")

// Query evaluates a `wend query` expression over a run's history: the run is replayed with
// the spec text it recorded, and the expression sees what the workflow's top-level
// expressions see at this point (input, state, run, and steps.ID.output of every step with
// an id that has completed outside a for_each body). Nothing is recorded: the interpreter is
// pure. Errors wrap spec.ErrQuery (the expression is invalid) or ErrQueryFailed.
func Query(events []history.Event, src string) (any, error) {
	q, err := spec.CompileQuery(src)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 || events[0].Type != history.WorkflowStarted {
		return nil, fmt.Errorf("the history does not begin with %s", history.WorkflowStarted)
	}
	st, err := history.DataOf[history.Started](events[0])
	if err != nil {
		return nil, err
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource))
	if ds.HasErrors() {
		return nil, fmt.Errorf("the run's recorded workflow %s does not load: %v", st.SpecFile, ds.Error())
	}
	r := New(w, st)
	if err := r.Replay(events); err != nil {
		return nil, err
	}
	env := r.queryEnv()
	outputs := env["steps"].(map[string]any)
	for _, id := range q.Steps {
		if _, ok := outputs[id]; ok {
			continue
		}
		have := "none has yet"
		if len(outputs) > 0 {
			have = "steps with outputs: " + joinNames(slices.Sorted(maps.Keys(outputs)))
		}
		if stepDeclared(w, id) {
			return nil, fmt.Errorf("%w: steps.%s: step %q has no output in run %s (%s)", ErrQueryFailed, id, id, st.RunID, have)
		}
		return nil, fmt.Errorf("%w: steps.%s: workflow %s has no step with id %q (%s)", ErrQueryFailed, id, w.Name, id, have)
	}
	v, err := q.Eval(env)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrQueryFailed, err)
	}
	return v, nil
}

// queryEnv is the environment of the run's top-level expressions now: the root scope's step
// outputs, all of them (a workflow's own expressions get only those they name).
func (r *Run) queryEnv() map[string]any {
	steps := map[string]any{}
	if r.root != nil && r.root.sc.steps != nil {
		for id, out := range r.root.sc.steps.all() {
			steps[id] = stepView(out)
		}
	}
	return map[string]any{
		"input": r.inputValue(),
		"state": r.state,
		"run":   map[string]any{"workflow_id": r.info.WorkflowID, "run_id": r.info.RunID},
		"steps": steps,
	}
}

func stepDeclared(w *spec.Workflow, id string) (found bool) {
	w.Walk(func(s *spec.Step) { found = found || s.ID == id })
	return found
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}
