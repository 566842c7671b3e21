package spec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Value is a JSON value written in a workflow (`with`, `set`, `output`, ...) whose strings may
// hold `${{ }}` templates. A string that is exactly one template takes the expression's value;
// other strings with templates are interpolated as text.
type Value struct {
	Pos  Pos
	Path string

	refsOnce sync.Once
	refs     []string // step ids read through steps.ID, for StepRefs

	secretsOnce sync.Once
	named       bool // v names a secret, for EvalFills

	literalOnce sync.Once
	literal     json.RawMessage // v's JSON when it holds no template, for LiteralJSON

	Lit    any       // a scalar without templates (string, int, float64, bool or nil)
	Parts  []part    // a string with templates: text and expressions, in order
	Fields []Field   // a mapping, in file order
	Items  []*Value  // a list
	kind   valueKind // which of the above
}

// Field is one entry of a mapping Value.
type Field struct {
	Key   string
	Value *Value
}

type valueKind uint8

const (
	valueLit valueKind = iota
	valueTemplate
	valueMap
	valueList
)

type part struct {
	text   string
	expr   *Expr  // nil for a text part
	secret string // a `${{ secrets.NAME }}` part: NAME; its text is the reference itself
}

const openTmpl, closeTmpl = "${{", "}}"

// newValue builds a Value from a YAML node; template syntax errors are reported through bad.
func newValue(n *yaml.Node, path string, bad func(n *yaml.Node, path, msg string)) *Value {
	v := &Value{Pos: posOf(n), Path: path}
	switch n.Kind {
	case yaml.MappingNode:
		v.kind = valueMap
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			v.Fields = append(v.Fields, Field{k, newValue(n.Content[i+1], joinKey(path, k), bad)})
		}
	case yaml.SequenceNode:
		v.kind = valueList
		for i, c := range n.Content {
			v.Items = append(v.Items, newValue(c, fmt.Sprintf("%s[%d]", path, i), bad))
		}
	default:
		if n.Tag == "!!str" && strings.Contains(n.Value, openTmpl) {
			parts, err := parseTemplate(n)
			if err != "" {
				bad(n, path, err)
			}
			v.kind, v.Parts = valueTemplate, parts
			return v
		}
		v.kind, v.Lit = valueLit, scalarValue(n)
	}
	return v
}

// parseTemplate splits a string into text and `${{ }}` expression parts.
func parseTemplate(n *yaml.Node) ([]part, string) {
	var parts []part
	s := n.Value
	offset := 0
	for {
		i := strings.Index(s, openTmpl)
		if i < 0 {
			if s != "" {
				parts = append(parts, part{text: s})
			}
			return parts, ""
		}
		if i > 0 {
			parts = append(parts, part{text: s[:i]})
		}
		j := strings.Index(s[i:], closeTmpl)
		if j < 0 {
			return parts, "unclosed ${{: add }} after the expression"
		}
		src := strings.TrimSpace(s[i+len(openTmpl) : i+j])
		if name, ok := secretRef(src); ok {
			parts = append(parts, part{text: SecretRef(name), secret: name})
		} else {
			parts = append(parts, part{expr: &Expr{Source: src, Pos: exprPos(n, offset+i)}})
		}
		offset += i + j + len(closeTmpl)
		s = s[i+j+len(closeTmpl):]
	}
}

// exprPos is the position of byte offset off of a scalar's text: exact for single-line plain
// and quoted scalars, the scalar's own position otherwise.
func exprPos(n *yaml.Node, off int) Pos {
	if strings.Contains(n.Value, "\n") || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return posOf(n)
	}
	col := n.Column + len([]rune(n.Value[:off]))
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		col++
	}
	return Pos{n.Line, col}
}

// scalarValue decodes a scalar by its YAML tag.
func scalarValue(n *yaml.Node) any {
	var v any
	if n.Tag == "!!str" || n.Tag == "!!timestamp" || n.Tag == "!!binary" {
		return n.Value
	}
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return v
}

// exprs returns every expression in v, in file order.
func (v *Value) exprs() []*Expr {
	if v == nil {
		return nil
	}
	var out []*Expr
	for _, p := range v.Parts {
		if p.expr != nil {
			out = append(out, p.expr)
		}
	}
	for _, f := range v.Fields {
		out = append(out, f.Value.exprs()...)
	}
	for _, it := range v.Items {
		out = append(out, it.exprs()...)
	}
	return out
}

// StepRefs lists the step ids v's expressions read through steps.ID, once each, so an
// evaluator can hand them just those outputs instead of every output so far.
func (v *Value) StepRefs() []string {
	if v == nil {
		return nil
	}
	v.refsOnce.Do(func() {
		for _, e := range v.exprs() {
			for _, id := range e.Steps {
				if !slices.Contains(v.refs, id) {
					v.refs = append(v.refs, id)
				}
			}
		}
	})
	return v.refs
}

// IsLiteral reports whether v holds no template at all.
func (v *Value) IsLiteral() bool { return len(v.exprs()) == 0 }

// LiteralJSON is the JSON (json.Marshal) of a v without templates, which every evaluation of
// it would give, encoded once: an activity step's literal `with` is then not evaluated and
// encoded again at each start. It reports false for a v with a template (or a secret
// reference), and for one json.Marshal refuses. The bytes are shared: read them only.
func (v *Value) LiteralJSON() (json.RawMessage, bool) {
	if v == nil {
		return nil, false
	}
	v.literalOnce.Do(func() {
		if !v.IsLiteral() || v.hasSecrets() {
			return
		}
		x, err := v.eval(nil, nil)
		if err != nil {
			return
		}
		if b, err := json.Marshal(x); err == nil {
			v.literal = b[:len(b):len(b)]
		}
	})
	return v.literal, v.literal != nil
}

// Eval computes v's JSON value for env.
func (v *Value) Eval(env map[string]any) (any, error) { return v.eval(env, nil) }

// eval is Eval that, given fills, also notes where each secret reference lands.
func (v *Value) eval(env map[string]any, f *fills) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch v.kind {
	case valueMap:
		m := make(map[string]any, len(v.Fields))
		for _, fl := range v.Fields {
			f.enter(fl.Key)
			x, err := fl.Value.eval(env, f)
			f.leave()
			if err != nil {
				return nil, err
			}
			m[fl.Key] = x
		}
		return m, nil
	case valueList:
		l := make([]any, len(v.Items))
		for i, it := range v.Items {
			f.enterIndex(i)
			x, err := it.eval(env, f)
			f.leave()
			if err != nil {
				return nil, err
			}
			l[i] = x
		}
		return l, nil
	case valueTemplate:
		return v.evalTemplate(env, f)
	}
	return v.Lit, nil
}

func (v *Value) evalTemplate(env map[string]any, f *fills) (any, error) {
	if len(v.Parts) == 1 && v.Parts[0].expr != nil {
		return v.Parts[0].expr.Eval(env)
	}
	var b strings.Builder
	for _, p := range v.Parts {
		if p.secret != "" {
			f.at(p.secret, b.Len())
		}
		if p.expr == nil {
			b.WriteString(p.text)
			continue
		}
		x, err := p.expr.Eval(env)
		if err != nil {
			return nil, err
		}
		b.WriteString(textOf(x))
	}
	return b.String(), nil
}

// textOf renders a value inside an interpolated string: strings as they are, nil as empty,
// everything else as compact JSON.
func textOf(x any) string {
	switch t := x.(type) {
	case nil:
		return ""
	case string:
		return t
	}
	return compactJSON(x)
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Secrets lists the secret names v references, once each, in file order.
func (v *Value) Secrets() []string {
	if v == nil {
		return nil
	}
	var out []string
	add := func(names []string) {
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	for _, p := range v.Parts {
		if p.secret != "" {
			add([]string{p.secret})
		}
	}
	for _, f := range v.Fields {
		add(f.Value.Secrets())
	}
	for _, it := range v.Items {
		add(it.Secrets())
	}
	return out
}
