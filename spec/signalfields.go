package spec

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// dataRef is a member chain an expression reads from the signal's data: signal.a.b[0], or
// output.a in the `set` of a wait_for_signal step (its output is that data). An element is a
// field name (string), an index (int) or unknown (nil: a computed key, not checked).
type dataRef struct {
	root string
	path []any
}

// dataRefOf returns the chain n reads when it starts at signal or output.
func dataRefOf(n ast.Node) (dataRef, bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return dataRef{root: n.Value}, n.Value == "signal" || n.Value == "output"
	case *ast.ChainNode:
		return dataRefOf(n.Node)
	case *ast.MemberNode:
		r, ok := dataRefOf(n.Node)
		if !ok {
			return r, false
		}
		var el any
		switch p := n.Property.(type) {
		case *ast.StringNode:
			el = p.Value
		case *ast.IntegerNode:
			el = p.Value
		}
		r.path = append(slices.Clip(r.path), el)
		return r, true
	}
	return dataRef{}, false
}

func (r dataRef) String() string {
	var b strings.Builder
	b.WriteString(r.root)
	for _, el := range r.path {
		switch el := el.(type) {
		case string:
			if plainKey(el) {
				b.WriteString("." + el)
			} else {
				b.WriteString("[" + strconv.Quote(el) + "]")
			}
		case int:
			fmt.Fprintf(&b, "[%d]", el)
		default:
			b.WriteString("[...]")
		}
	}
	return b.String()
}

// checkDataRefs explains the first chain that reads a field the signal's schema does not
// have; "" when every one is possible. The check is one of names, not of every schema
// keyword: it follows properties, items, local $refs and additionalProperties, and stops
// (accepting) where the schema says nothing of the fields (no properties, patternProperties,
// a combinator), so it never refuses data the schema would accept by name alone.
func checkDataRefs(decl *SignalDecl, refs []dataRef) string {
	for _, r := range refs {
		cur := decl.Schema
		for i, el := range r.path {
			m, ok := resolveLocalRef(decl.Schema, cur).(map[string]any)
			if !ok {
				break // true, or a form this check does not read
			}
			name, isName := el.(string)
			if !isName {
				if items, ok := m["items"]; ok {
					cur = items
					continue
				}
				break
			}
			props, hasProps := m["properties"].(map[string]any)
			if p, ok := props[name]; ok {
				cur = p
				continue
			}
			if _, ok := m["patternProperties"]; ok {
				break
			}
			if ap, ok := m["additionalProperties"]; ok && ap != false {
				cur = ap
				continue
			}
			at := dataRef{root: r.root, path: r.path[:i+1]}
			if !hasProps {
				if t, ok := m["type"].(string); ok && t != "object" {
					return fmt.Sprintf("%s: the data of signal %q is %s %s (signals.%s.schema), which has no fields",
						at, decl.Name, article(t), t, decl.Name)
				}
				break
			}
			names := slices.Sorted(maps.Keys(props))
			msg := fmt.Sprintf("%s: the data of signal %q has no field %q", at, decl.Name, name)
			if s := suggest(name, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			if len(names) > 0 {
				msg += fmt.Sprintf("; fields of %s in signals.%s.schema: %s", dataRef{root: r.root, path: r.path[:i]}, decl.Name, nameList(names))
			}
			return msg
		}
	}
	return ""
}

// resolveLocalRef follows $ref "#/..." pointers inside root, a few hops at most.
func resolveLocalRef(root, s any) any {
	for range 8 {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return s
		}
		var cur any = root
		for _, tok := range splitPointer(strings.TrimPrefix(ref, "#")) {
			cm, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = cm[tok]
		}
		s = cur
	}
	return s
}
