package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bounds of yamlToJSON. The loader enforces tighter limits (depth 64, 10,000 nodes) before
// calling it; these only make sure a caller that forgot cannot make it recurse or allocate
// without bound.
const (
	yamlJSONMaxDepth = 256
	yamlJSONMaxNodes = 1 << 20
)

// jsonDoc is a YAML document converted to the values encoding/json produces, with the YAML
// nodes behind every value, so findings about the JSON value (schema errors) can be reported at
// the line and column the author wrote.
type jsonDoc struct {
	// value is map[string]any, []any, string, int64, float64, json.Number (integers beyond
	// int64), bool or nil.
	value any
	// nodes maps the JSON Pointer (RFC 6901) of every value to its node; "" is the root.
	nodes map[string]*yaml.Node
	// keys maps the JSON Pointer of every mapping entry's value to the entry's key node, so
	// findings about a key (a bad plugin name) point at the key.
	keys map[string]*yaml.Node
}

// yamlJSONError is a node yamlToJSON cannot convert, with its position.
type yamlJSONError struct {
	line, column int
	pointer      string
	msg          string
}

func (e *yamlJSONError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.line, e.column, e.msg)
}

// yamlToJSON converts a YAML node (a document or any node in it) to a JSON-compatible value,
// deciding each scalar's type by its YAML tag as the yaml decoder would. It never follows an
// alias: aliases are an error, as are non-scalar mapping keys, merge keys, duplicate keys,
// unknown tags and numbers JSON cannot hold (.inf, .nan).
func yamlToJSON(n *yaml.Node) (*jsonDoc, error) {
	c := &yamlJSONConv{doc: &jsonDoc{nodes: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}}
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			c.doc.nodes[""] = n
			return c.doc, nil
		}
		n = n.Content[0]
	}
	if n == nil {
		return c.doc, nil
	}
	v, err := c.convert(n, "", 0)
	if err != nil {
		return nil, err
	}
	c.doc.value = v
	return c.doc, nil
}

type yamlJSONConv struct {
	doc   *jsonDoc
	count int
}

func (c *yamlJSONConv) errorf(n *yaml.Node, ptr, format string, args ...any) error {
	return &yamlJSONError{line: n.Line, column: n.Column, pointer: ptr, msg: fmt.Sprintf(format, args...)}
}

func (c *yamlJSONConv) convert(n *yaml.Node, ptr string, depth int) (any, error) {
	if n == nil {
		return nil, &yamlJSONError{pointer: ptr, msg: "missing value"}
	}
	c.count++
	if c.count > yamlJSONMaxNodes {
		return nil, c.errorf(n, ptr, "document has more than %d nodes", yamlJSONMaxNodes)
	}
	if depth > yamlJSONMaxDepth {
		return nil, c.errorf(n, ptr, "nesting deeper than %d levels", yamlJSONMaxDepth)
	}
	c.doc.nodes[ptr] = n
	switch n.Kind {
	case yaml.ScalarNode:
		return c.scalar(n, ptr)
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			v, err := c.convert(item, ptr+"/"+strconv.Itoa(i), depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		return c.mapping(n, ptr, depth)
	case yaml.AliasNode:
		return nil, c.errorf(n, ptr, "aliases (*%s) are not supported", n.Value)
	case yaml.DocumentNode:
		return nil, c.errorf(n, ptr, "unexpected nested document")
	default:
		return nil, c.errorf(n, ptr, "unknown YAML node kind %d", n.Kind)
	}
}

func (c *yamlJSONConv) mapping(n *yaml.Node, ptr string, depth int) (any, error) {
	if len(n.Content)%2 != 0 {
		return nil, c.errorf(n, ptr, "malformed mapping")
	}
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k == nil {
			return nil, c.errorf(n, ptr, "malformed mapping")
		}
		if k.Kind != yaml.ScalarNode {
			return nil, c.errorf(k, ptr, "mapping keys must be scalars, got a %s", yamlKindName(k))
		}
		if k.ShortTag() == "!!merge" {
			return nil, c.errorf(k, ptr, "merge keys (<<) are not supported")
		}
		if _, dup := m[k.Value]; dup {
			return nil, c.errorf(k, ptr, "duplicate key %q", k.Value)
		}
		childPtr := ptr + "/" + escapePointer(k.Value)
		c.doc.keys[childPtr] = k
		val, err := c.convert(v, childPtr, depth+1)
		if err != nil {
			return nil, err
		}
		m[k.Value] = val
	}
	return m, nil
}

// scalar converts by tag. Decoding a scalar node cannot reach an alias, so it is safe to hand
// to the yaml decoder, which knows every integer and float spelling (0x1F, 1_000, .5).
func (c *yamlJSONConv) scalar(n *yaml.Node, ptr string) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!timestamp", "!!binary":
		// Timestamps and binary stay as written: JSON has no such types, and the text is what
		// the author meant.
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.errorf(n, ptr, "invalid boolean %q", n.Value)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return json.Number(strconv.FormatUint(u, 10)), nil
		}
		return nil, c.errorf(n, ptr, "integer %q out of range", n.Value)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.errorf(n, ptr, "invalid number %q", n.Value)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, c.errorf(n, ptr, "%s is not a JSON number", n.Value)
		}
		return f, nil
	default:
		return nil, c.errorf(n, ptr, "unsupported YAML tag %s", tag)
	}
}

func yamlKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}

// escapePointer escapes one JSON Pointer reference token (RFC 6901 §3).
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// unescapePointer undoes escapePointer.
func unescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}

// splitPointer returns the unescaped reference tokens of a JSON Pointer ("" has none).
func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = unescapePointer(p)
	}
	return parts
}

// wendPath renders a JSON Pointer into root as a wend path: keys joined with '.', list indices
// as [i], keys that are not plain words quoted, e.g. steps[1].retry.tries or with["a.b"].
// prefix is the path of root itself ("" for a whole document).
func wendPath(prefix string, root any, ptr string) string {
	var b strings.Builder
	b.WriteString(prefix)
	cur := root
	for _, tok := range splitPointer(ptr) {
		if list, ok := cur.([]any); ok {
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(list) {
				fmt.Fprintf(&b, "[%d]", i)
				cur = list[i]
				continue
			}
		}
		if m, ok := cur.(map[string]any); ok {
			cur = m[tok]
		} else {
			cur = nil
		}
		if plainKey(tok) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		} else {
			fmt.Fprintf(&b, "[%s]", strconv.Quote(tok))
		}
	}
	return b.String()
}

// plainKey reports whether a key can be written bare in a path.
func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// jsonValueAt returns the value at ptr in root.
func jsonValueAt(root any, ptr string) (any, bool) {
	cur := root
	for _, tok := range splitPointer(ptr) {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
