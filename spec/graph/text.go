package graph

import (
	"fmt"
	"io"
	"strings"
)

// Mermaid writes g as a Mermaid flowchart, which GitHub renders in a README or a pull request.
func Mermaid(w io.Writer, g *Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%%%% workflow %s\n", mermaidText(strings.ReplaceAll(g.Name, "\n", " ")))
	b.WriteString("flowchart TD\n")
	for _, n := range g.Nodes {
		open, close := mermaidShape(n.Kind)
		fmt.Fprintf(&b, "  %s%s\"%s\"%s\n", n.ID, open, mermaidText(n.Label), close)
	}
	for _, e := range g.Edges {
		switch e.Kind {
		case EdgeNext:
			fmt.Fprintf(&b, "  %s --> %s\n", e.From, e.To)
		case EdgeCompensate, EdgeLoop:
			fmt.Fprintf(&b, "  %s -.->|%s| %s\n", e.From, e.Kind, e.To)
		default:
			fmt.Fprintf(&b, "  %s -->|%s| %s\n", e.From, e.Kind, e.To)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mermaidShape(k NodeKind) (string, string) {
	switch k {
	case NodeStart, NodeEnd, NodeCancelled:
		return "([", "])"
	case NodeJoin, "parallel":
		return "{{", "}}"
	case "for_each":
		return "[[", "]]"
	case "delay", "wait_for_signal", "wait_for_workflow":
		return "(", ")"
	case "run_workflow":
		return "[/", "/]"
	case "fail":
		return "[\\", "\\]"
	}
	return "[", "]"
}

// mermaidText writes s for inside a quoted Mermaid label: letters, digits and a few plain
// marks as they are, newlines as <br/>, every other character as an entity code (#34;), so
// quotes, brackets, arrows and markup stay text.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString("<br/>")
		case plain(r):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "#%d;", r)
		}
	}
	return b.String()
}

func plain(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune(" _.,:/=+*$@!?", r)
}

// Dot writes g as a Graphviz digraph.
func Dot(w io.Writer, g *Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotString(g.Name))
	b.WriteString("  rankdir=TB;\n  node [shape=box, style=rounded, fontname=\"sans-serif\"];\n  edge [fontname=\"sans-serif\"];\n")
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "  %s [label=%s%s];\n", n.ID, dotString(n.Label), dotShape(n.Kind))
	}
	for _, e := range g.Edges {
		attrs := ""
		switch e.Kind {
		case EdgeNext:
		case EdgeCompensate, EdgeLoop:
			attrs = fmt.Sprintf(" [label=%q, style=dashed]", e.Kind)
		case EdgeCatch:
			attrs = fmt.Sprintf(" [label=%q, color=red]", e.Kind)
		default:
			attrs = fmt.Sprintf(" [label=%q]", e.Kind)
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", e.From, e.To, attrs)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotShape(k NodeKind) string {
	switch k {
	case NodeStart, NodeEnd, NodeCancelled:
		return ", shape=oval"
	case NodeJoin, "parallel":
		return ", shape=hexagon"
	case "for_each":
		return ", peripheries=2"
	case "delay", "wait_for_signal", "wait_for_workflow":
		return ", shape=ellipse"
	case "run_workflow":
		return ", shape=component"
	case "fail":
		return ", shape=octagon"
	}
	return ""
}

// dotString quotes s as a Graphviz string: backslashes and quotes escaped, a newline as \n,
// other control characters as spaces (a raw one would end the statement in some readers).
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < ' ' || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
