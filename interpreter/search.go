package interpreter

import (
	"fmt"

	"github.com/wendflow/wend/history"
)

// SearchValues computes the workflow's search fields (`search:`) from the run's input and
// state as they are now: the values by name, and by name why a field has none (its expression
// failed, or gave a value of the wrong type). A field whose value is null has neither. Both
// are nil for a workflow without search fields, and for a shard's child run, which has no
// state of its own worth finding runs by.
func (r *Run) SearchValues() (vals map[string]any, problems map[string]string) {
	if len(r.w.SearchOrder) == 0 || r.shard != nil || r.root == nil {
		return nil, nil
	}
	env := r.env(nil, nil, nil)
	for _, name := range r.w.SearchOrder {
		f := r.w.Search[name]
		if f == nil || f.Value == nil {
			continue
		}
		v, err := f.Value.Eval(env)
		if err != nil {
			err = fmt.Errorf("search field %s: %w", name, err)
		} else {
			v, err = f.Coerce(v)
		}
		switch {
		case err != nil:
			if problems == nil {
				problems = map[string]string{}
			}
			problems[name] = err.Error()
		case v != nil:
			if vals == nil {
				vals = map[string]any{}
			}
			vals[name] = v
		}
	}
	return vals, problems
}

// searchUnchanged reports whether a run record already holds vals and problems.
func searchUnchanged(rec history.Run, vals map[string]any, problems map[string]string) bool {
	if len(rec.Search) != len(vals) || len(rec.SearchProblems) != len(problems) {
		return false
	}
	for k, v := range vals {
		if old, ok := rec.Search[k]; !ok || old != v {
			return false
		}
	}
	for k, p := range problems {
		if rec.SearchProblems[k] != p {
			return false
		}
	}
	return true
}

// KeepSearch sets rec's search values to the run's current ones; it reports the fields whose
// problem is new, for the caller to log. rec's maps are replaced, never changed in place:
// records are shared with readers.
func (r *Run) KeepSearch(rec *history.Run) (newProblems []string) {
	vals, problems := r.SearchValues()
	if searchUnchanged(*rec, vals, problems) {
		return nil
	}
	for _, name := range r.w.SearchOrder {
		if p, ok := problems[name]; ok && rec.SearchProblems[name] != p {
			newProblems = append(newProblems, p)
		}
	}
	rec.Search, rec.SearchProblems = vals, problems
	return newProblems
}
