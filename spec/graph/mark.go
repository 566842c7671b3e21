package graph

import "strings"

// Mark is what a drawing of a run adds to one step's box: the step's state as a class (for
// the page's colours) and as a line of text under its label, so the state never rests on
// colour alone; whether the run waits there now; and where a click on the box leads.
type Mark struct {
	State   string // a word: none, running, waiting, completed, failed, caught, compensated, cancelled
	Text    string // the state's lines: "completed", "running\n3 items: 2 completed, 1 running"
	Current bool   // the run waits at this step now
	Href    string // "" for no link
}

// Options change how SVGWith draws.
type Options struct {
	// Marks are the run's states by step path (Node.Path); steps without one are drawn plain.
	Marks map[string]Mark
	// IDPrefix starts every id the drawing sets, so two drawings (or a drawing and its page)
	// never share one.
	IDPrefix string
	Class    string // the svg element's class
	// Name names a step that has no id, by its path (else the path itself is its label).
	Name func(path string) string
	// Styled leaves the colours to the page's stylesheet: boxes, texts and edges carry their
	// classes and kinds but no fill, stroke, anchor, weight or marker of their own (a fifth to
	// a quarter less markup, for a page that draws hundreds of steps). A standalone file needs
	// them.
	Styled bool
}

// stateLines is how many lines a mark adds under a label.
func (m Mark) stateLines() int { return strings.Count(m.Text, "\n") + 1 }

// marked is g with each step without an id named by name (when given) and each marked
// step's state line added to its label, so the layout sizes the box for it. g itself is not
// changed.
func marked(g *Graph, marks map[string]Mark, name func(string) string) *Graph {
	c := &Graph{Name: g.Name, Edges: g.Edges, Nodes: make([]Node, len(g.Nodes))}
	copy(c.Nodes, g.Nodes)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if name != nil && n.Step != "" && n.Step == n.Path {
			if nm := name(n.Path); nm != "" {
				n.Label = strings.Replace(n.Label, n.Path, strings.ReplaceAll(nm, "\n", " "), 1)
			}
		}
		if m, ok := marks[n.Path]; ok && n.Step != "" {
			n.Label += "\n" + m.Text
		}
	}
	return c
}

// classWord keeps the letters, digits, '-' and '_' of a state, so it is one class name.
func classWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, s)
}

// idText is classWord for an id: an id never needs escaping, nor breaks a url(#…).
func idText(s string) string { return classWord(s) }
