package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/expr-lang/expr/types"
)

// scope is what an expression may read where it appears: the always-present names (input,
// state, steps, run), extra names (loop variables, output, signal, error) and the step ids
// that have run on every path to this point.
type scope struct {
	c     *checker
	vars  map[string]any
	avail map[string]bool
}

func (sc *scope) with(names ...string) *scope {
	n := &scope{c: sc.c, vars: maps.Clone(sc.vars), avail: maps.Clone(sc.avail)}
	if n.vars == nil {
		n.vars = map[string]any{}
	}
	for _, name := range names {
		n.vars[name] = nil
	}
	return n
}

func (sc *scope) withSteps(ids map[string]bool) *scope {
	n := sc.with()
	if n.avail == nil {
		n.avail = map[string]bool{}
	}
	maps.Copy(n.avail, ids)
	return n
}

// env is the compile-time environment: the names in scope with the types expr can know.
// Data from outside (input, state, outputs, items) is typed any, so member access and
// operators are checked at run time. `steps` is any too: which ids may be read here is
// checked by checkStepRefs with better messages, and a typed map of every available step
// made each compile cost grow with the number of steps before it.
func (sc *scope) env() types.Map {
	env := types.Map{
		"input": types.Any,
		"state": types.Any,
		"steps": types.Any,
		"run":   types.Map{"workflow_id": types.String, "run_id": types.String},
	}
	for k := range sc.vars {
		env[k] = types.Any
		if k == "index" {
			env[k] = types.Int
		}
	}
	return env
}

func (sc *scope) names() []string {
	return slices.Sorted(maps.Keys(sc.env()))
}

// checkStepRefs explains a steps.ID that is not available here.
func (sc *scope) checkStepRefs(ids []string) string {
	for _, id := range ids {
		if sc.avail[id] {
			continue
		}
		if s, ok := sc.c.ids[id]; ok {
			return fmt.Sprintf("steps.%s is not available here: step %q (line %d) has not run on every path to this point (it runs later, in another branch, only under a condition, or inside a loop)", id, id, s.Pos.Line)
		}
		msg := fmt.Sprintf("unknown step id %q", id)
		if s := suggest(id, slices.Collect(maps.Keys(sc.c.ids))); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		if len(sc.avail) > 0 {
			msg += "; available here: " + strings.Join(slices.Sorted(maps.Keys(sc.avail)), ", ")
		}
		return msg
	}
	return ""
}
