package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// reserved names cannot be used as a for_each `as` name.
var reserved = []string{"input", "state", "steps", "run", "output", "signal", "error", "index"}

// checker runs the semantic checks the schema cannot express, over a decoded workflow.
type checker struct {
	file  string
	w     *Workflow
	ids   map[string]*Step
	diags Diagnostics
	child func(s *Step) string // validates a run_workflow target; returns a problem or ""
}

func (c *checker) errorf(pos Pos, path, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{File: c.file, Line: pos.Line, Column: pos.Col, Path: path,
		Message: fmt.Sprintf(format, args...), Severity: SeverityError})
}

func (c *checker) run() {
	c.collectIDs()
	top := &scope{c: c}
	done := c.sequence(c.w.Steps, top)
	if c.w.Output != nil {
		c.value(c.w.Output, top.withSteps(done))
	}
	c.sequence(c.w.OnCancel, top)
	c.limits()
	c.concurrency()
	c.search()
}

// collectIDs records every step id and reports duplicates.
func (c *checker) collectIDs() {
	c.ids = map[string]*Step{}
	c.w.Walk(func(s *Step) {
		if s.ID == "" {
			return
		}
		if first, dup := c.ids[s.ID]; dup {
			c.errorf(s.Pos, s.Path+".id", "duplicate step id %q (first at line %d); step ids are unique in a file", s.ID, first.Pos.Line)
			return
		}
		c.ids[s.ID] = s
	})
}

// sequence checks steps in order and returns the ids that have run on every path through it.
func (c *checker) sequence(steps []*Step, sc *scope) map[string]bool {
	done := map[string]bool{}
	for i, s := range steps {
		for id := range c.step(s, sc.withSteps(done)) {
			done[id] = true
		}
		if s.Kind == KindContinueAsNew && i < len(steps)-1 {
			c.errorf(steps[i+1].Pos, steps[i+1].Path, "this step never runs: the continue_as_new before it ends the run")
		}
	}
	return done
}

// step checks one step and returns the ids that have surely run once it completes.
func (c *checker) step(s *Step, sc *scope) map[string]bool {
	if s.If != nil {
		c.expr(s.If, s.Path+".if", sc, true)
	}
	c.applicable(s)
	if s.With != nil {
		if s.Kind == KindActivity {
			c.exprs(s.With, sc)
			c.activitySecrets(s.With)
		} else {
			c.value(s.With, sc)
		}
	}
	inner := c.kind(s, sc)
	if len(s.Set) > 0 {
		names := []string{"output"}
		if s.Kind == KindWaitForSignal {
			names = append(names, "signal")
		}
		setScope := sc.with(names...)
		if s.Kind == KindWaitForSignal && c.w.Signals[s.Signal] != nil && c.w.Signals[s.Signal].Schema != nil {
			setScope.signal = c.w.Signals[s.Signal]
		}
		for _, f := range s.Set {
			c.value(f.Value, setScope)
		}
	}
	after := map[string]bool{}
	if len(s.Catch) == 0 {
		maps.Copy(after, inner)
	}
	if s.ID != "" {
		after[s.ID] = true
	}
	c.sequence(s.CompensateWith, sc.withSteps(after))
	c.sequence(s.Catch, sc.with("error"))
	if s.If != nil {
		return nil
	}
	return after
}

// kind checks what is particular to the step's kind and returns the ids its body surely ran.
func (c *checker) kind(s *Step, sc *scope) map[string]bool {
	switch s.Kind {
	case KindActivity:
		c.activity(s)
	case KindSteps:
		return c.sequence(s.Steps, sc)
	case KindParallel:
		done := map[string]bool{}
		for _, b := range s.Parallel {
			maps.Copy(done, c.step(b, sc))
		}
		return done
	case KindForEach:
		c.forEach(s, sc)
	case KindWaitForSignal:
		c.waitForSignal(s)
	case KindDelay:
		if s.DelayUntil != nil {
			c.value(s.DelayUntil, sc)
		}
	case KindRunWorkflow:
		if c.child != nil {
			if msg := c.child(s); msg != "" {
				c.errorf(s.Pos, s.Path+".run_workflow", "%s", msg)
			}
		}
	case KindWaitForWorkflow:
		c.value(s.WaitForWorkflow, sc)
	case KindFail:
		if s.Fail != nil && s.Fail.Message != nil {
			c.value(s.Fail.Message, sc)
		}
	}
	return nil
}

func (c *checker) activity(s *Step) {
	if s.Plugin == "" || s.Activity == "" {
		return // the schema reports the form
	}
	if _, ok := c.w.Plugins[s.Plugin]; !ok {
		msg := fmt.Sprintf("plugin %q is not declared under plugins", s.Plugin)
		if sug := suggest(s.Plugin, c.w.PluginOrder); sug != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sug)
		} else if len(c.w.PluginOrder) == 0 {
			msg += "; declare it, e.g. plugins: {" + s.Plugin + ": ./plugins/" + s.Plugin + "}"
		}
		c.errorf(s.Pos, s.Path+".activity", "%s", msg)
	}
}

// waitForSignal refuses a wait for a signal the workflow does not declare, when it declares
// its signals: such a wait could never end, since a send of that name is refused.
func (c *checker) waitForSignal(s *Step) {
	if c.w.Signals == nil || s.Signal == "" || c.w.Signals[s.Signal] != nil {
		return
	}
	msg := fmt.Sprintf("signal %q is not declared under signals", s.Signal)
	if sug := suggest(s.Signal, c.w.SignalOrder); sug != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", sug)
	}
	if len(c.w.SignalOrder) > 0 {
		msg += "; declared: " + nameList(c.w.SignalOrder)
	}
	msg += "; a send of an undeclared signal is refused, so this wait could never end"
	c.errorf(s.SignalPos, s.Path+".wait_for_signal", "%s", msg)
}

func (c *checker) forEach(s *Step, sc *scope) {
	if s.ForEach != nil {
		c.value(s.ForEach, sc)
	}
	if slices.Contains(reserved, s.As) {
		c.errorf(s.Pos, s.Path+".as", "%q is a reserved name; pick another name for the item", s.As)
	}
	if len(s.Steps) == 0 {
		c.errorf(s.Pos, s.Path, "for_each needs steps: the body to run for each item")
	}
	c.sequence(s.Steps, sc.with(s.As, "index"))
	c.shard(s)
}

// applicable reports fields that mean nothing for the step's kind.
func (c *checker) applicable(s *Step) {
	only := func(set bool, field string, kinds ...Kind) {
		if set && s.Kind != "" && !slices.Contains(kinds, s.Kind) {
			c.errorf(s.Pos, s.Path+"."+field, "%s does not apply to %s %s step (only to %s)", field, article(string(s.Kind)), s.Kind, kindList(kinds))
		}
	}
	only(s.Retry != nil, "retry", KindActivity)
	only(s.HeartbeatTimeout.IsSet(), "heartbeat_timeout", KindActivity)
	only(s.Timeout.IsSet(), "timeout", KindActivity, KindWaitForSignal, KindWaitForWorkflow, KindRunWorkflow)
	only(s.With != nil, "with", KindActivity, KindRunWorkflow, KindContinueAsNew)
	only(s.As != "item", "as", KindForEach)
	only(s.Concurrency != 1, "concurrency", KindForEach)
	only(s.Shard != 0, "shard", KindForEach)
}

// article is "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func kindList(kinds []Kind) string {
	out := ""
	for i, k := range kinds {
		if i > 0 {
			out += ", "
		}
		out += string(k)
	}
	return out
}

// value checks v's expressions and refuses secrets in it (only an activity's `with` may
// hold them).
func (c *checker) value(v *Value, sc *scope) {
	c.exprs(v, sc)
	c.refuseSecrets(v)
}

func (c *checker) exprs(v *Value, sc *scope) {
	for _, e := range v.exprs() {
		c.expr(e, v.Path, sc, false)
	}
}

func (c *checker) expr(e *Expr, path string, sc *scope, asBool bool) {
	if msg := compileExpr(e, sc, asBool); msg != "" {
		c.errorf(e.Pos, path, "%s", msg)
	}
}
