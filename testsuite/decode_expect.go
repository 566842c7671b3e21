package testsuite

import (
	"slices"

	"github.com/wendflow/wend/history"
	"go.yaml.in/yaml/v3"
)

var expectKeys = []string{"status", "closed_reason", "output", "output_contains", "state", "state_contains",
	"calls", "compensations", "failure", "duration", "events"}

var statuses = []string{history.StatusRunning, history.StatusCompleted, history.StatusFailed, history.StatusCancelled, history.StatusContinued}

func want[T any](v T, n *yaml.Node, path string) *Want[T] {
	return &Want[T]{V: v, Pos: pos(n), Path: path}
}

func (d *decoder) expect(e *Expect, n *yaml.Node, path string) {
	d.mapping(n, path, expectKeys, nil, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "status":
			s := d.str(v, p)
			if s != "" && !slices.Contains(statuses, s) {
				d.errorf(v, p, "unknown status %q; one of %v", s, statuses)
			}
			e.Status = want(s, v, p)
		case "closed_reason":
			e.ClosedReason = want(d.str(v, p), v, p)
		case "output":
			e.Output = want(d.value(v, p), v, p)
		case "output_contains":
			e.OutputContains = want(d.value(v, p), v, p)
		case "state":
			e.State = want(d.value(v, p), v, p)
		case "state_contains":
			e.StateContains = want(d.value(v, p), v, p)
		case "calls":
			var cs []CallWant
			d.list(v, p, func(_ int, item *yaml.Node, ip string) { cs = append(cs, d.callWant(item, ip)) })
			e.Calls = want(cs, v, p)
		case "compensations":
			var ss []string
			d.list(v, p, func(_ int, item *yaml.Node, ip string) { ss = append(ss, d.str(item, ip)) })
			e.Compensations = want(ss, v, p)
		case "failure":
			e.Failure = want(d.failureWant(v, p), v, p)
		case "duration":
			e.Duration = want(d.duration(v, p, true), v, p)
		case "events":
			var es []EventWant
			d.list(v, p, func(_ int, item *yaml.Node, ip string) { es = append(es, d.eventWant(item, ip)) })
			e.Events = want(es, v, p)
		}
	})
}

func (d *decoder) callWant(n *yaml.Node, path string) CallWant {
	if n.Kind == yaml.ScalarNode {
		return CallWant{Activity: d.str(n, path)}
	}
	var c CallWant
	d.mapping(n, path, []string{"activity", "step", "input", "attempt"}, []string{"activity"}, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "activity":
			c.Activity = d.str(v, p)
		case "step":
			c.Step = d.str(v, p)
		case "input":
			c.Input, c.HasInput = d.value(v, p), true
		case "attempt":
			var i int
			if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&i) != nil || i < 1 {
				d.errorf(v, p, "expected a positive whole number")
			}
			c.Attempt = i
		}
	})
	return c
}

func (d *decoder) failureWant(n *yaml.Node, path string) FailureWant {
	var f FailureWant
	d.mapping(n, path, []string{"type", "category", "message", "step", "non_retryable"}, nil, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "type":
			f.Type = d.str(v, p)
		case "category":
			f.Category = d.str(v, p)
		case "message":
			f.Message = d.str(v, p)
		case "step":
			f.Step = d.str(v, p)
		case "non_retryable":
			b := d.boolean(v, p)
			f.NonRetryable = &b
		}
	})
	return f
}

func (d *decoder) eventWant(n *yaml.Node, path string) EventWant {
	if n.Kind == yaml.ScalarNode {
		return EventWant{Type: d.str(n, path)}
	}
	var e EventWant
	d.mapping(n, path, []string{"type", "step"}, []string{"type"}, func(key string, v *yaml.Node) {
		if key == "type" {
			e.Type = d.str(v, join(path, key))
		} else {
			e.Step = d.str(v, join(path, key))
		}
	})
	return e
}
