package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Pos is a 1-based line and column in a workflow file.
type Pos struct {
	Line, Col int
}

func posOf(n *yaml.Node) Pos {
	if n == nil {
		return Pos{}
	}
	return Pos{n.Line, n.Column}
}

// tooBig is the finding for a workflow file of size bytes, over MaxFileBytes.
func tooBig(size int64) string {
	return fmt.Sprintf("file is %d bytes, over the %d-byte limit for a workflow; split it with run_workflow", size, MaxFileBytes)
}

// parseYAML reads one YAML document and checks the limits. It returns the document's root
// mapping node, or nil with the diagnostics that say why the file can't be read.
func parseYAML(file string, data []byte) (*yaml.Node, Diagnostics) {
	fail := func(line, col int, format string, args ...any) (*yaml.Node, Diagnostics) {
		return nil, Diagnostics{{File: file, Line: line, Column: col, Message: fmt.Sprintf(format, args...), Severity: SeverityError}}
	}
	if len(data) > MaxFileBytes {
		return fail(0, 0, "%s", tooBig(int64(len(data))))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(0, 0, "file is empty; a workflow needs at least `wend: v1`, `name` and `steps`")
	}
	if !utf8.Valid(data) {
		line, col := invalidUTF8At(data)
		return fail(line, col, "file is not valid UTF-8; save it as UTF-8")
	}
	if n, line, col := precountNodes(data, MaxNodes); n > MaxNodes {
		return fail(line, col, "file has more than %d YAML nodes; split it with run_workflow", MaxNodes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // only comments, or a bare document marker
			return fail(0, 0, "file has no content; a workflow needs at least `wend: v1`, `name` and `steps`")
		}
		line, msg := yamlErrorLine(err)
		col := 1
		switch {
		case msg == "control characters are not allowed": // yaml.v3 gives no line
			line, col = controlCharAt(data)
		case msg == "found a tab character that violates indentation": // yaml.v3 gives the line before
			line, col = tabIndentAt(data, line)
		case line == 0:
			line, col = unknownAnchorAt(data, msg) // yaml.v3 gives this one no line
		}
		return fail(max(line, 1), col, "invalid YAML: %s", msg) // no line in the message: line 1
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil { // text after the document that does not start another one
			line, msg := yamlErrorLine(err)
			return fail(max(line, 1), 1, "invalid YAML: %s", msg)
		}
		return fail(extra.Line, 1, "file has more than one YAML document; put one workflow per file")
	}
	if ds := checkTree(file, &doc); len(ds) > 0 {
		return nil, ds
	}
	if len(doc.Content) == 0 {
		return fail(0, 0, "file has no content; a workflow needs at least `wend: v1`, `name` and `steps`")
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" && root.Value == "" { // "---" alone
		return fail(0, 0, "file has no content; a workflow needs at least `wend: v1`, `name` and `steps`")
	}
	if root.Kind != yaml.MappingNode {
		return fail(root.Line, root.Column, "a workflow must be a mapping with keys like `wend`, `name` and `steps`, not a %s", kindName(root))
	}
	return root, nil
}

// checkTree walks the node tree once, iteratively, enforcing the limits and refusing anchors,
// aliases and duplicate keys. It stops at the first violation: a broken tree is not worth more.
func checkTree(file string, doc *yaml.Node) Diagnostics {
	type item struct {
		n     *yaml.Node
		depth int
	}
	fail := func(n *yaml.Node, format string, args ...any) Diagnostics {
		return Diagnostics{{File: file, Line: n.Line, Column: n.Column, Message: fmt.Sprintf(format, args...), Severity: SeverityError}}
	}
	stack := []item{{doc, 0}}
	count := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		count++
		if count > MaxNodes {
			return fail(n, "file has more than %d YAML nodes; split it with run_workflow", MaxNodes)
		}
		if n.Kind == yaml.AliasNode {
			return fail(n, "YAML aliases (*%s) are not supported; write the value out", n.Value)
		}
		if n.Anchor != "" {
			return fail(n, "YAML anchors (&%s) are not supported; write the value out where it is used", n.Anchor)
		}
		if it.depth > MaxDepth && n.Kind != yaml.ScalarNode { // a scalar is not a level
			return fail(n, "nesting is deeper than %d levels", MaxDepth)
		}
		if n.Kind == yaml.MappingNode {
			if len(n.Content)/2 > MaxKeysPerMapping {
				return fail(n, "mapping has %d keys, over the limit of %d", len(n.Content)/2, MaxKeysPerMapping)
			}
			if ds := checkKeys(file, n); ds != nil {
				return ds
			}
		}
		for _, c := range n.Content {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return nil
}

// checkKeys refuses duplicate and non-scalar keys in linear time.
func checkKeys(file string, m *yaml.Node) Diagnostics {
	seen := make(map[string]*yaml.Node, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			return Diagnostics{{File: file, Line: k.Line, Column: k.Column, Message: "mapping keys must be plain strings", Severity: SeverityError}}
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			return Diagnostics{{File: file, Line: k.Line, Column: k.Column, Message: "YAML merge keys (<<) are not supported; write the keys out", Severity: SeverityError}}
		}
		if first, dup := seen[k.Value]; dup {
			return Diagnostics{{File: file, Line: k.Line, Column: k.Column,
				Message: fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, first.Line), Severity: SeverityError}}
		}
		seen[k.Value] = k
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "scalar"
	}
	return "alias"
}

// yamlErrorLine pulls the line number out of yaml.v3's "yaml: line N: msg" errors.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	var line int
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		if parserErrors[msg] {
			line++ // yaml.v3 reports parser (not scanner) errors with a 0-based line
		}
		return line, msg
	}
	if parserErrors[msg] {
		return 1, msg // yaml.v3 leaves out a parser error's 0-based line when it is 0
	}
	return 0, msg
}

// parserErrors are the messages of yaml.v3's parser (parserc.go), as opposed to its scanner.
var parserErrors = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// unknownAnchorAt finds the alias of yaml.v3's "unknown anchor 'NAME' referenced" error, which
// carries no position: the first *NAME in the file. It returns 0, 1 for any other message.
func unknownAnchorAt(data []byte, msg string) (line, col int) {
	name, ok1 := strings.CutPrefix(msg, "unknown anchor '")
	name, ok2 := strings.CutSuffix(name, "' referenced")
	if !ok1 || !ok2 || name == "" {
		return 0, 1
	}
	i := bytes.Index(data, []byte("*"+name))
	if i < 0 {
		return 0, 1
	}
	line = 1 + bytes.Count(data[:i], []byte("\n"))
	col = 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:i], '\n')+1:i])
	return line, col
}

// controlCharAt is the position of the first character YAML does not allow in a file (C0 and
// C1 controls other than tab, line feed, carriage return and NEL; DEL; U+FFFE, U+FFFF), or 1, 1.
func controlCharAt(data []byte) (line, col int) {
	line, col = 1, 1
	for _, r := range string(data) {
		switch {
		case r == '\n':
			line, col = line+1, 1
			continue
		case r == '\t' || r == '\r' || r == 0x85:
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == 0xfffe, r == 0xffff:
			return line, col
		}
		col++
	}
	return 1, 1
}

// tabIndentAt is the position of the first tab in the indentation of a line at or after
// line (1-based), or line, 1 when there is none.
func tabIndentAt(data []byte, line int) (int, int) {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 < line {
			continue
		}
		indent := len(l) - len(bytes.TrimLeft(l, " \t"))
		if j := bytes.IndexByte(l[:indent], '\t'); j >= 0 {
			return i + 1, j + 1
		}
	}
	return line, 1
}

func invalidUTF8At(data []byte) (line, col int) {
	line, col = 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		data = data[size:]
	}
	return line, col
}
