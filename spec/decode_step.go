package spec

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

var stepKeys = []string{"id", "description", "if", "with", "set", "timeout", "heartbeat_timeout", "retry",
	"compensate_with", "catch", "activity", "steps", "parallel", "for_each", "as", "concurrency", "shard", "delay",
	"wait_for_signal", "run_workflow", "wait_for_workflow", "continue_as_new", "fail"}

// kindKeys are the keys that choose what a step does; `steps` is the body of a for_each.
var kindKeys = []Kind{KindActivity, KindParallel, KindForEach, KindDelay, KindWaitForSignal,
	KindRunWorkflow, KindWaitForWorkflow, KindContinueAsNew, KindFail, KindSteps}

func (d *decoder) stepList(n *yaml.Node, path string) []*Step {
	if n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]*Step, 0, len(n.Content))
	for i, c := range n.Content {
		if s := d.step(c, fmt.Sprintf("%s[%d]", path, i)); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// stepOrList accepts one step or a list of steps (compensate_with, catch, on_cancel).
func (d *decoder) stepOrList(n *yaml.Node, path string) []*Step {
	if n.Kind == yaml.MappingNode {
		if s := d.step(n, path); s != nil {
			return []*Step{s}
		}
		return nil
	}
	return d.stepList(n, path)
}

func (d *decoder) step(n *yaml.Node, path string) *Step {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	s := &Step{Path: path, Pos: posOf(n), As: "item", Concurrency: 1}
	var kinds []string
	d.fields(n, path, stepKeys, func(key string, k, v *yaml.Node) {
		p := joinKey(path, key)
		if isKind(key) && !(key == "steps" && hasKey(n, "for_each")) {
			kinds = append(kinds, key)
			s.Kind = Kind(key)
		}
		d.stepField(s, key, v, p)
	})
	switch {
	case len(kinds) == 0 && hasKey(n, "set"):
		d.errorf(n, path, "step has no kind: a step that only sets state is `steps: []` with its `set` (or give it one of activity, steps, parallel, for_each, delay, wait_for_signal, run_workflow, wait_for_workflow, continue_as_new, fail)")
	case len(kinds) == 0:
		d.errorf(n, path, "step has no kind: give it one of activity, steps, parallel, for_each, delay, wait_for_signal, run_workflow, wait_for_workflow, continue_as_new, fail")
	case len(kinds) > 1:
		d.errorf(n, path, "step has more than one kind (%s); split it into separate steps", strings.Join(kinds, ", "))
	}
	return s
}

func (d *decoder) stepField(s *Step, key string, v *yaml.Node, p string) {
	switch key {
	case "id":
		s.ID = str(v)
	case "description":
		s.Description = str(v)
	case "if":
		s.If = d.condition(v, p)
	case "with":
		s.With = newValue(v, p, d.badValue)
	case "set":
		d.set(s, v, p)
	case "timeout":
		s.Timeout = d.duration(v, p)
	case "heartbeat_timeout":
		s.HeartbeatTimeout = d.duration(v, p)
	case "retry":
		s.Retry = d.retry(v, p)
	case "compensate_with":
		s.CompensateWith = d.stepOrList(v, p)
	case "catch":
		s.Catch = d.stepOrList(v, p)
	case "activity":
		s.Plugin, s.Activity, _ = strings.Cut(str(v), ".")
	case "steps":
		s.Steps = d.stepList(v, p)
	case "parallel":
		s.Parallel = d.stepList(v, p)
	case "for_each":
		s.ForEach = d.exprValue(v, p)
	case "as":
		s.As = str(v)
	case "concurrency":
		s.Concurrency = integer(v, 1)
	case "shard":
		s.Shard = integer(v, 0)
	case "delay":
		d.delay(s, v, p)
	case "wait_for_signal":
		s.Signal, s.SignalPos = str(v), posOf(v)
	case "run_workflow":
		s.RunWorkflow = str(v)
	case "wait_for_workflow":
		s.WaitForWorkflow = newValue(v, p, d.badValue)
	case "continue_as_new":
		// true is the only form; false would be a step that does nothing, which the schema refuses.
	case "fail":
		d.fail(s, v, p)
	}
}

func (d *decoder) set(s *Step, v *yaml.Node, path string) {
	if v.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i].Value
		if strings.HasPrefix(k, "_") {
			d.errorf(v.Content[i], joinKey(path, k), "state keys starting with _ are reserved for the engine")
			continue
		}
		s.Set = append(s.Set, SetField{k, newValue(v.Content[i+1], joinKey(path, k), d.badValue)})
	}
}

func (d *decoder) delay(s *Step, v *yaml.Node, p string) {
	if v.Kind == yaml.ScalarNode {
		s.Delay = d.duration(v, p)
		return
	}
	d.fields(v, p, []string{"until"}, func(_ string, _, u *yaml.Node) {
		s.DelayUntil = d.exprValue(u, p+".until")
	})
}

func (d *decoder) fail(s *Step, v *yaml.Node, p string) {
	f := &FailSpec{}
	if v.Kind == yaml.ScalarNode {
		f.Message = newValue(v, p, d.badValue)
	}
	d.fields(v, p, []string{"message", "type", "non_retryable"}, func(key string, _, v2 *yaml.Node) {
		switch key {
		case "message":
			f.Message = newValue(v2, p+".message", d.badValue)
		case "type":
			f.Type = str(v2)
		case "non_retryable":
			f.NonRetryable = boolean(v2)
		}
	})
	s.Fail = f
}

// condition reads `if`: an expression with or without ${{ }}.
func (d *decoder) condition(n *yaml.Node, path string) *Expr {
	if n.Kind != yaml.ScalarNode {
		return nil
	}
	if n.Tag == "!!bool" {
		return &Expr{Source: n.Value, Pos: posOf(n)}
	}
	v := d.exprValue(n, path)
	if v == nil || len(v.Parts) != 1 || v.Parts[0].expr == nil {
		if v != nil && v.kind == valueTemplate {
			d.errorf(n, path, "a condition must be a single ${{ }} expression, without text around it")
		}
		return nil
	}
	return v.Parts[0].expr
}

// exprValue reads a value that is an expression with or without ${{ }}, or a literal list.
func (d *decoder) exprValue(n *yaml.Node, path string) *Value {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && !strings.Contains(n.Value, openTmpl) {
		e := &Expr{Source: strings.TrimSpace(n.Value), Pos: posOf(n)}
		return &Value{Pos: posOf(n), Path: path, kind: valueTemplate, Parts: []part{{expr: e}}}
	}
	return newValue(n, path, d.badValue)
}

func isKind(key string) bool {
	for _, k := range kindKeys {
		if string(k) == key {
			return true
		}
	}
	return false
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}
