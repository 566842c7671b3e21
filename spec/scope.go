package spec

import (
	"fmt"
	"maps"
	"slices"

	"github.com/expr-lang/expr/types"
)

// scope is what an expression may read where it appears: the always-present names (input,
// state, steps, run), extra names (loop variables, output, signal, error) and the step ids
// that have run on every path to this point. Scopes form a chain; each level holds only what
// it adds, so entering a step costs nothing however many steps ran before it.
type scope struct {
	c      *checker
	parent *scope
	vars   []string        // names this level adds
	avail  map[string]bool // step ids this level adds; read only while the scope is in use
	signal *SignalDecl     // the declared signal whose data signal (and output) hold here
	// keyOnly limits the names to input and run: a concurrency key is known before any step.
	keyOnly bool
}

// signalDecl is the declared signal in scope: set in the `set` of a wait_for_signal step
// whose signal the workflow declares; nil elsewhere.
func (sc *scope) signalDecl() *SignalDecl {
	for s := sc; s != nil; s = s.parent {
		if s.signal != nil {
			return s.signal
		}
	}
	return nil
}

func (sc *scope) with(names ...string) *scope {
	return &scope{c: sc.c, parent: sc, vars: names}
}

// withSteps adds ids; the map is shared, not copied: callers do not change it while the
// returned scope is in use.
func (sc *scope) withSteps(ids map[string]bool) *scope {
	return &scope{c: sc.c, parent: sc, avail: ids}
}

func (sc *scope) hasStep(id string) bool {
	for s := sc; s != nil; s = s.parent {
		if s.avail[id] {
			return true
		}
	}
	return false
}

// availSteps lists every step id available here, sorted (for messages).
func (sc *scope) availSteps() []string {
	set := map[string]bool{}
	for s := sc; s != nil; s = s.parent {
		maps.Copy(set, s.avail)
	}
	return slices.Sorted(maps.Keys(set))
}

// env is the compile-time environment: the names in scope with the types expr can know.
// Data from outside (input, state, outputs, items) is typed any, so member access and
// operators are checked at run time. `steps` is any too: which ids may be read here is
// checked by checkStepRefs with better messages, and a typed map of every available step
// made each compile cost grow with the number of steps before it.
func (sc *scope) env() types.Map {
	if sc.keyOnly {
		return types.Map{"input": types.Any, "run": types.Map{"workflow_id": types.String, "run_id": types.String}}
	}
	env := types.Map{
		"input": types.Any,
		"state": types.Any,
		"steps": types.Any,
		"run":   types.Map{"workflow_id": types.String, "run_id": types.String},
	}
	for s := sc; s != nil; s = s.parent {
		for _, k := range s.vars {
			env[k] = types.Any
			if k == "index" {
				env[k] = types.Int
			}
		}
	}
	return env
}

func (sc *scope) names() []string {
	return slices.Sorted(maps.Keys(sc.env()))
}

// checkStepRefs explains a steps.ID that is not available here.
// Without a checker (CompileQuery) every id passes: the caller checks them against the run.
func (sc *scope) checkStepRefs(ids []string) string {
	if sc.c == nil {
		return ""
	}
	for _, id := range ids {
		if sc.hasStep(id) {
			continue
		}
		if s, ok := sc.c.ids[id]; ok {
			return fmt.Sprintf("steps.%s is not available here: step %q (line %d) has not run on every path to this point (it runs later, in another branch, only under a condition, or inside a loop)", id, id, s.Pos.Line)
		}
		msg := fmt.Sprintf("unknown step id %q", id)
		if s := suggest(id, slices.Collect(maps.Keys(sc.c.ids))); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		if avail := sc.availSteps(); len(avail) > 0 {
			msg += "; available here: " + nameList(avail)
		}
		return msg
	}
	return ""
}
