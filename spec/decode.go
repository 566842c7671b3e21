package spec

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder builds the typed model from a node tree that passed checkTree. It reports unknown
// keys (with suggestions) and syntax inside values (templates, durations); wrong value shapes
// are the JSON Schema's to report, so the decoder skips them without a second message.
type decoder struct {
	file  string
	diags Diagnostics
	input *yaml.Node // the `input` schema, compiled by the loader
	// signalSchemas are the declared signals' `schema` nodes, compiled by the loader.
	signalSchemas map[string]*yaml.Node
	// scheduleInputs are checked against the input schema once it is compiled.
	scheduleInputs []scheduleInput
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	p := posOf(n)
	d.diags = append(d.diags, Diagnostic{File: d.file, Line: p.Line, Column: p.Col, Path: path,
		Message: fmt.Sprintf(format, args...), Severity: SeverityError})
}

// fields iterates a mapping's entries, reporting keys not in known.
func (d *decoder) fields(n *yaml.Node, path string, known []string, fn func(key string, k, v *yaml.Node)) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(known, k.Value) {
			msg := fmt.Sprintf("unknown key %q", k.Value)
			if s := suggest(k.Value, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += "; allowed: " + strings.Join(known, ", ")
			}
			d.errorf(k, joinKey(path, k.Value), "%s", msg)
			continue
		}
		fn(k.Value, k, v)
	}
}

var workflowKeys = []string{"wend", "name", "description", "input", "signals", "secrets", "plugins", "defaults", "timeouts",
	"compensate_on_failure", "compensation", "on_cancel", "steps", "output",
	"schedules", "limits", "retention",
	"concurrency", "search"}

func (d *decoder) workflow(root *yaml.Node) *Workflow {
	w := &Workflow{Plugins: map[string]*Plugin{}}
	d.fields(root, "", workflowKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			w.Name = str(v)
		case "description":
			w.Description = str(v)
		case "input":
			if jd, err := yamlToJSON(v); err == nil {
				w.Input = jd.value
			}
			d.input = v
		case "signals":
			d.signals(w, v)
		case "plugins":
			d.plugins(w, v)
		case "secrets":
			d.secrets(w, v)
		case "defaults":
			d.fields(v, key, []string{"retry", "timeout", "heartbeat_timeout"}, func(key2 string, _, v2 *yaml.Node) {
				p := joinKey(key, key2)
				switch key2 {
				case "retry":
					w.Defaults.Retry = d.retry(v2, p)
				case "timeout":
					w.Defaults.Timeout = d.duration(v2, p)
				case "heartbeat_timeout":
					w.Defaults.HeartbeatTimeout = d.duration(v2, p)
				}
			})
		case "timeouts":
			d.fields(v, key, []string{"execution", "run"}, func(key2 string, _, v2 *yaml.Node) {
				if key2 == "execution" {
					w.Timeouts.Execution = d.duration(v2, "timeouts.execution")
				} else {
					w.Timeouts.Run = d.duration(v2, "timeouts.run")
				}
			})
		case "compensate_on_failure":
			w.CompensateOnFailure = boolean(v)
		case "compensation":
			d.fields(v, key, []string{"continue_on_error"}, func(_ string, _, v2 *yaml.Node) {
				w.CompensationContinueOnError = boolean(v2)
			})
		case "on_cancel":
			w.OnCancel = d.stepOrList(v, key)
		case "steps":
			w.Steps = d.stepList(v, key)
		case "output":
			w.Output = newValue(v, key, d.badValue)
		case "schedules":
			d.schedules(w, v)
		case "limits":
			d.limits(w, v)
		case "retention":
			w.Retention = d.duration(v, key)
		case "concurrency":
			d.concurrency(w, v)
		case "search":
			d.search(w, v)
		}
	})
	return w
}

func (d *decoder) badValue(n *yaml.Node, path, msg string) { d.errorf(n, path, "%s", msg) }

func (d *decoder) plugins(w *Workflow, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := &Plugin{Name: k.Value, Pos: posOf(k)}
		path := "plugins." + k.Value
		if v.Kind == yaml.ScalarNode {
			p.Command = []string{v.Value}
		}
		d.fields(v, path, []string{"command", "sha256", "env", "builtin", "start_timeout"}, func(key string, _, v2 *yaml.Node) {
			switch key {
			case "start_timeout":
				p.StartTimeout = d.duration(v2, path+".start_timeout")
				if p.StartTimeout.D > MaxPluginStartTimeout {
					d.errorf(v2, path+".start_timeout", "start_timeout is at most 10m (a plugin that takes longer is stuck), got %q", v2.Value)
				}
			case "builtin":
				p.Builtin = d.builtin(v2, path+".builtin")
			case "command":
				p.Command = strs(v2)
			case "sha256":
				p.SHA256 = strings.ToLower(str(v2))
			case "env":
				p.Env = strs(v2)
			}
		})
		if p.Builtin != "" {
			if len(p.Command) > 0 || p.SHA256 != "" {
				d.errorf(v, path, "a builtin plugin takes no command or sha256: it is served by wend itself")
			}
			p.Command = []string{BuiltinCommandPrefix + p.Builtin}
		}
		w.Plugins[p.Name] = p
		w.PluginOrder = append(w.PluginOrder, p.Name)
	}
}

func (d *decoder) retry(n *yaml.Node, path string) *Retry {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	r := &Retry{Tries: 1, Pos: posOf(n)}
	d.fields(n, path, []string{"tries", "backoff", "non_retryable"}, func(key string, _, v *yaml.Node) {
		p := joinKey(path, key)
		switch key {
		case "tries":
			r.Tries = integer(v, 1)
		case "backoff":
			d.backoff(r, v, p)
		case "non_retryable":
			r.NonRetryable = strs(v)
		}
	})
	return r
}

func (d *decoder) backoff(r *Retry, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			r.Backoff = append(r.Backoff, d.duration(c, fmt.Sprintf("%s[%d]", path, i)))
		}
	case yaml.MappingNode:
		e := &Exponential{Factor: 2}
		d.fields(n, path, []string{"initial", "factor", "max", "jitter"}, func(key string, _, v *yaml.Node) {
			p := joinKey(path, key)
			switch key {
			case "initial":
				e.Initial = d.duration(v, p)
			case "factor":
				e.Factor = number(v, 2)
			case "max":
				e.Max = d.duration(v, p)
			case "jitter":
				e.Jitter = number(v, 0)
			}
		})
		r.Exponential = e
	}
}

// duration parses a duration scalar; syntax is the schema's to report, positivity is ours.
func (d *decoder) duration(n *yaml.Node, path string) Duration {
	if n.Kind != yaml.ScalarNode {
		return Duration{}
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		if err != errDurationSyntax {
			d.errorf(n, path, "%v", err)
		}
		return Duration{}
	}
	if v <= 0 {
		d.errorf(n, path, "duration must be positive, got %q", n.Value)
		return Duration{}
	}
	return Duration{D: v, Pos: posOf(n)}
}

// Scalar helpers: they return the zero value for a node of the wrong shape.

func str(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func strs(n *yaml.Node) []string {
	switch n.Kind {
	case yaml.ScalarNode:
		return []string{n.Value}
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, str(c))
		}
		return out
	}
	return nil
}

func boolean(n *yaml.Node) bool {
	var b bool
	return n.Kind == yaml.ScalarNode && n.Tag == "!!bool" && n.Decode(&b) == nil && b
}

func integer(n *yaml.Node, def int) int {
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		return def
	}
	return i
}

func number(n *yaml.Node, def float64) float64 {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
		return def
	}
	return f
}
