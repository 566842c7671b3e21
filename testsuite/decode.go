package testsuite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"github.com/wendflow/wend/spec"
	"go.yaml.in/yaml/v3"
)

// Decode parses a test file. path names it in findings and anchors `workflow`. The File is
// nil when the findings hold an error.
func Decode(path string, data []byte) (*File, spec.Diagnostics) {
	root, ds := spec.ParseNode(path, data)
	if root == nil {
		for i := range ds {
			ds[i].Message = forTestFiles(ds[i].Message)
		}
		return nil, ds
	}
	d := &decoder{file: path}
	f := d.file1(root)
	if d.diags.HasErrors() {
		return nil, d.diags.Sorted()
	}
	return f, d.diags
}

// forTestFiles rewords the reader's findings that speak of workflows.
func forTestFiles(msg string) string {
	switch {
	case strings.Contains(msg, "-byte limit for a workflow;"):
		head, _, _ := strings.Cut(msg, " for a workflow;")
		return head + " for a test file; split its cases over several test files"
	case strings.HasPrefix(msg, "file is empty;"), strings.HasPrefix(msg, "file has no content;"):
		return "file has no content; a test file needs `workflow` and `cases`"
	case strings.HasPrefix(msg, "a workflow must be a mapping"):
		_, kind, _ := strings.Cut(msg, ", not ")
		return "a test file must be a mapping with keys `workflow` and `cases`, not " + kind
	case strings.HasSuffix(msg, "put one workflow per file"):
		return strings.Replace(msg, "put one workflow per file", "put all cases under one `cases` list", 1)
	}
	return msg
}

type decoder struct {
	file  string
	diags spec.Diagnostics
}

func pos(n *yaml.Node) spec.Pos { return spec.Pos{Line: n.Line, Col: n.Column} }

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.diags = append(d.diags, spec.Diagnostic{File: d.file, Line: n.Line, Column: n.Column, Path: path,
		Message: fmt.Sprintf(format, args...), Severity: spec.SeverityError})
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping calls fn for each entry of a mapping, reporting keys not in known and required
// keys that are missing.
func (d *decoder) mapping(n *yaml.Node, path string, known, required []string, fn func(key string, v *yaml.Node)) bool {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping with keys %s", strings.Join(known, ", "))
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(known, k.Value) {
			d.errorf(k, join(path, k.Value), "unknown key %q; allowed: %s", k.Value, strings.Join(known, ", "))
			continue
		}
		seen[k.Value] = true
		fn(k.Value, v)
	}
	for _, r := range required {
		if !seen[r] {
			d.errorf(n, path, "missing key %q", r)
		}
	}
	return true
}

func (d *decoder) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, path, "expected a string")
		return ""
	}
	return n.Value
}

func (d *decoder) boolean(n *yaml.Node, path string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		d.errorf(n, path, "expected true or false")
	}
	return b
}

func (d *decoder) duration(n *yaml.Node, path string, zeroOK bool) time.Duration {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, "expected a duration like 30s, 5m, 2h or 7d")
		return 0
	}
	if zeroOK && n.Value == "0s" || zeroOK && n.Value == "0" {
		return 0
	}
	v, err := spec.ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return 0
	}
	if v <= 0 && !zeroOK {
		d.errorf(n, path, "duration must be positive, got %q", n.Value)
	}
	return v
}

// value turns YAML into the JSON value it means (numbers as float64, as outputs decode).
func (d *decoder) value(n *yaml.Node, path string) any {
	var v any
	if err := n.Decode(&v); err != nil {
		d.errorf(n, path, "%v", err)
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.errorf(n, path, "not a JSON value: mapping keys must be strings")
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func (d *decoder) list(n *yaml.Node, path string, fn func(i int, item *yaml.Node, p string)) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "expected a list")
		return
	}
	for i, c := range n.Content {
		fn(i, c, fmt.Sprintf("%s[%d]", path, i))
	}
}

func (d *decoder) file1(root *yaml.Node) *File {
	f := &File{Path: d.file}
	d.mapping(root, "", []string{"workflow", "mocks", "cases"}, []string{"workflow", "cases"}, func(key string, v *yaml.Node) {
		switch key {
		case "workflow":
			f.Workflow = d.str(v, key)
			f.WFPos = pos(v)
			if f.Workflow != "" && !filepath.IsAbs(f.Workflow) {
				f.Workflow = filepath.Join(filepath.Dir(d.file), f.Workflow)
			}
		case "mocks":
			f.Mocks = d.mocks(v, key)
		case "cases":
			names := map[string]bool{}
			d.list(v, key, func(_ int, item *yaml.Node, p string) {
				c := d.case1(item, p)
				if c.Name != "" && names[c.Name] {
					d.errorf(item, p+".name", "another case is named %q; names must be unique", c.Name)
				}
				names[c.Name] = true
				f.Cases = append(f.Cases, c)
			})
			if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				d.errorf(v, key, "no cases; add at least one")
			}
		}
	})
	return f
}

var caseKeys = []string{"name", "input", "mocks", "signals", "cancel", "terminate", "children", "expect"}

func (d *decoder) case1(n *yaml.Node, path string) *Case {
	c := &Case{Pos: pos(n)}
	d.mapping(n, path, caseKeys, []string{"name", "expect"}, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "name":
			c.Name = d.str(v, p)
		case "input":
			c.Input = d.value(v, p)
		case "mocks":
			c.Mocks = d.mocks(v, p)
		case "signals":
			d.list(v, p, func(_ int, item *yaml.Node, ip string) {
				c.Signals = append(c.Signals, d.trigger(item, ip, true))
			})
		case "cancel":
			c.Cancel = d.trigger(v, p, false)
		case "terminate":
			c.Term = d.trigger(v, p, false)
		case "children":
			d.list(v, p, func(_ int, item *yaml.Node, ip string) { c.Children = append(c.Children, d.child(item, ip)) })
		case "expect":
			d.expect(&c.Expect, v, p)
		}
	})
	return c
}

func (d *decoder) mocks(n *yaml.Node, path string) []*Mock {
	var out []*Mock
	d.list(n, path, func(_ int, item *yaml.Node, p string) {
		m := &Mock{Pos: pos(item), Path: p}
		var single *yaml.Node
		d.mapping(item, p, []string{"activity", "step", "when", "results", "output", "echo", "error", "timeout", "takes"}, []string{"activity"}, func(key string, v *yaml.Node) {
			kp := join(p, key)
			switch key {
			case "activity":
				m.Activity = d.str(v, kp)
				if m.Activity != "" && strings.Count(m.Activity, ".") != 1 {
					d.errorf(v, kp, "expected plugin.activity, got %q", m.Activity)
				}
			case "step":
				m.Step = d.str(v, kp)
			case "when":
				m.WhenSrc = d.str(v, kp)
				m.When = d.when(v, kp, m.WhenSrc)
			case "results":
				d.list(v, kp, func(_ int, r *yaml.Node, rp string) { m.Results = append(m.Results, d.result(r, rp, true)) })
				if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
					d.errorf(v, kp, "no results; give at least one")
				}
			default:
				single = item
			}
		})
		if single != nil {
			if m.Results != nil {
				d.errorf(item, p, "give either results (a list) or one result (output, echo, error, timeout), not both")
			} else {
				m.Results = []Result{d.result(filterKeys(item, "activity", "step", "when"), p, true)}
			}
		} else if m.Results == nil && item.Kind == yaml.MappingNode {
			d.errorf(item, p, "the mock gives no result; add output, echo, error, timeout or results")
		}
		if first := shadowing(out, m); first != nil {
			d.errorf(item, p, "this mock never answers: %s (line %d) takes every call it would (the first mock that matches answers); to answer calls in turn, give one mock `results: [first, second, ...]`", first.Path, first.Pos.Line)
		}
		out = append(out, m)
	})
	return out
}

// shadowing is the earlier mock of the same list that takes every call m would (same activity,
// step and when), or nil.
func shadowing(earlier []*Mock, m *Mock) *Mock {
	for _, e := range earlier {
		if e.Activity == m.Activity && e.Step == m.Step && e.WhenSrc == m.WhenSrc {
			return e
		}
	}
	return nil
}

// filterKeys copies a mapping without some keys.
func filterKeys(n *yaml.Node, drop ...string) *yaml.Node {
	c := *n
	c.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !slices.Contains(drop, n.Content[i].Value) {
			c.Content = append(c.Content, n.Content[i], n.Content[i+1])
		}
	}
	return &c
}

func (d *decoder) when(n *yaml.Node, path, src string) *vm.Program {
	src = strings.TrimSpace(src)
	if strings.HasPrefix(src, "${{") && strings.HasSuffix(src, "}}") {
		src = strings.TrimSpace(src[3 : len(src)-2])
	}
	if src == "" {
		return nil
	}
	if len(src) > 4096 {
		d.errorf(n, path, "condition is %d characters, over the 4096 limit", len(src))
		return nil
	}
	p, err := expr.Compile(src, expr.Env(map[string]any{"input": map[string]any{}}), expr.AsBool(), expr.MaxNodes(1000))
	if err != nil {
		d.errorf(n, path, "invalid condition: %s", firstLine(err.Error()))
		return nil
	}
	return p
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func (d *decoder) result(n *yaml.Node, path string, allowTimeout bool) Result {
	r := Result{Pos: pos(n)}
	kinds := 0
	known := []string{"output", "echo", "error", "takes"}
	if allowTimeout {
		known = append(known, "timeout")
	}
	d.mapping(n, path, known, nil, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "output":
			r.Output, r.HasOutput = d.value(v, p), true
			r.Pos = pos(v) // where a finding about the output points
			kinds++
		case "echo":
			r.Echo = d.boolean(v, p)
			kinds++
		case "timeout":
			switch {
			case v.Kind == yaml.ScalarNode && v.Tag == "!!bool" && v.Value == "true":
				r.Timeout = "timeout"
			case v.Kind == yaml.ScalarNode && (v.Value == "timeout" || v.Value == "heartbeat_timeout"):
				r.Timeout = v.Value
			default:
				d.errorf(v, p, "expected true, timeout or heartbeat_timeout")
			}
			kinds++
		case "error":
			r.Error = d.errorSpec(v, p)
			kinds++
		case "takes":
			r.Takes = d.duration(v, p, true)
		}
	})
	if n.Kind == yaml.MappingNode && kinds != 1 {
		d.errorf(n, path, "a result is exactly one of output, echo, error or timeout (found %d)", kinds)
	}
	return r
}

func (d *decoder) errorSpec(n *yaml.Node, path string) *ErrorSpec {
	e := &ErrorSpec{}
	d.mapping(n, path, []string{"type", "message", "non_retryable"}, nil, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "type":
			e.Type = d.str(v, p)
		case "message":
			e.Message = d.str(v, p)
		case "non_retryable":
			e.NonRetryable = d.boolean(v, p)
		}
	})
	return e
}

func (d *decoder) trigger(n *yaml.Node, path string, signal bool) *Trigger {
	t := &Trigger{Pos: pos(n), Path: path}
	known, req := []string{"at", "after", "reason"}, []string(nil)
	if signal {
		known, req = []string{"name", "data", "at", "after"}, []string{"name"}
	}
	whens := 0
	d.mapping(n, path, known, req, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "name":
			t.Name = d.str(v, p)
		case "data":
			t.Data = d.value(v, p)
		case "reason":
			t.Reason = d.str(v, p)
		case "at":
			t.At = d.duration(v, p, true)
			whens++
		case "after":
			t.After = d.str(v, p)
			whens++
		}
	})
	if n.Kind == yaml.MappingNode && whens > 1 {
		d.errorf(n, path, "give at or after, not both")
	}
	return t
}

func (d *decoder) child(n *yaml.Node, path string) *Child {
	c := &Child{Pos: pos(n), Path: path}
	var res *yaml.Node
	d.mapping(n, path, []string{"step", "run", "output", "error", "takes"}, []string{"step"}, func(key string, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "step":
			c.Step = d.str(v, p)
		case "run":
			c.Run = d.boolean(v, p)
		default:
			res = n
		}
	})
	switch {
	case res != nil && c.Run:
		d.errorf(n, path, "give run: true or a mocked result (output, error), not both")
	case res != nil:
		c.Result = d.result(filterKeys(n, "step", "run"), path, false)
	case !c.Run && n.Kind == yaml.MappingNode:
		d.errorf(n, path, "give run: true or a mocked result (output or error)")
	}
	return c
}
