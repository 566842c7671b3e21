// Package graph draws a workflow file: it builds a graph model (nodes and edges) from a
// checked spec.Workflow and renders it as Mermaid, Graphviz dot or a standalone SVG laid out
// here, so drawing a file needs no Graphviz. Step ids and names are user input: every
// renderer escapes them, so hostile names cannot break out of a label.
package graph

import (
	"fmt"
	"strings"

	"github.com/wendflow/wend/spec"
)

// NodeKind is what a node stands for.
type NodeKind string

// Node kinds: the workflow's start and end, one per step kind, and a parallel's join.
const (
	NodeStart     NodeKind = "start"
	NodeEnd       NodeKind = "end"
	NodeCancelled NodeKind = "on_cancel" // where on_cancel steps begin
	NodeJoin      NodeKind = "join"      // a parallel's branches meet here
	NodeEmpty     NodeKind = "empty"     // a steps group with no steps
)

// EdgeKind is why one node follows another.
type EdgeKind string

// Edge kinds.
const (
	EdgeNext       EdgeKind = "next"       // sequence
	EdgeBranch     EdgeKind = "branch"     // parallel fork
	EdgeBody       EdgeKind = "body"       // for_each into its body
	EdgeLoop       EdgeKind = "loop"       // for_each body back to the next item
	EdgeCatch      EdgeKind = "catch"      // a step's failure into its catch steps
	EdgeCompensate EdgeKind = "compensate" // a step's compensation
)

// Node is one box of the drawing.
type Node struct {
	ID    string   // n0, n1, ...: safe in every format
	Kind  NodeKind // a spec.Kind for steps, else one of the Node* kinds
	Label string   // first line: the step's id, else its path; may hold newlines
	Step  string   // the step's id, else its path; "" for start, end and join
	Path  string   // the step's path; "" for start, end and join
	Pos   spec.Pos // where the step is in the file
}

// Edge joins two nodes by their IDs.
type Edge struct {
	From, To string
	Kind     EdgeKind
}

// Graph is a workflow's drawing model.
type Graph struct {
	Name  string
	Nodes []Node
	Edges []Edge
}

// Build returns the graph of a checked workflow.
func Build(w *spec.Workflow) *Graph {
	b := &builder{g: &Graph{Name: w.Name}}
	start := b.node(Node{Kind: NodeStart, Label: "start"})
	exits := b.seq(w.Steps, []string{start}, EdgeNext)
	end := b.node(Node{Kind: NodeEnd, Label: "end"})
	b.link(exits, end, EdgeNext)
	if len(w.OnCancel) > 0 {
		c := b.node(Node{Kind: NodeCancelled, Label: "on cancel"})
		b.seq(w.OnCancel, []string{c}, EdgeNext)
	}
	return b.g
}

type builder struct{ g *Graph }

func (b *builder) node(n Node) string {
	n.ID = fmt.Sprintf("n%d", len(b.g.Nodes))
	b.g.Nodes = append(b.g.Nodes, n)
	return n.ID
}

func (b *builder) link(from []string, to string, k EdgeKind) {
	for _, f := range from {
		b.g.Edges = append(b.g.Edges, Edge{From: f, To: to, Kind: k})
	}
}

// seq draws steps one after another, the first reached from prev by an edge of kind k, and
// returns the nodes the sequence leaves from.
func (b *builder) seq(steps []*spec.Step, prev []string, k EdgeKind) []string {
	for _, s := range steps {
		prev = b.step(s, prev, k)
		k = EdgeNext
	}
	return prev
}

// step draws s reached from prev and returns its exits.
func (b *builder) step(s *spec.Step, prev []string, k EdgeKind) []string {
	var main string // the node catch and compensate_with leave from
	var exits []string
	switch s.Kind {
	case spec.KindSteps:
		if len(s.Steps) == 0 {
			main = b.stepNode(s, NodeKind(NodeEmpty))
			b.link(prev, main, k)
			exits = []string{main}
			break
		}
		first := len(b.g.Nodes)
		exits = b.seq(s.Steps, prev, k)
		main = b.g.Nodes[first].ID
	case spec.KindParallel:
		main = b.stepNode(s, NodeKind(s.Kind))
		b.link(prev, main, k)
		join := b.node(Node{Kind: NodeJoin, Label: "join", Path: s.Path})
		for _, br := range s.Parallel {
			b.link(b.step(br, []string{main}, EdgeBranch), join, EdgeNext)
		}
		if len(s.Parallel) == 0 {
			b.link([]string{main}, join, EdgeNext)
		}
		exits = []string{join}
	case spec.KindForEach:
		main = b.stepNode(s, NodeKind(s.Kind))
		b.link(prev, main, k)
		if len(s.Steps) > 0 {
			b.link(b.seq(s.Steps, []string{main}, EdgeBody), main, EdgeLoop)
		}
		exits = []string{main}
	default:
		main = b.stepNode(s, NodeKind(s.Kind))
		b.link(prev, main, k)
		if s.Kind != spec.KindFail && s.Kind != spec.KindContinueAsNew { // nothing follows these
			exits = []string{main}
		}
	}
	if len(s.CompensateWith) > 0 {
		b.seq(s.CompensateWith, []string{main}, EdgeCompensate)
	}
	if len(s.Catch) > 0 {
		exits = append(exits, b.seq(s.Catch, []string{main}, EdgeCatch)...)
	}
	return exits
}

func (b *builder) stepNode(s *spec.Step, k NodeKind) string {
	name := s.ID
	if name == "" {
		name = s.Path
	}
	lines := []string{name}
	if d := detail(s); d != "" {
		lines = append(lines, d)
	}
	if s.If != nil {
		lines = append(lines, "if "+s.If.Source)
	}
	return b.node(Node{Kind: k, Label: strings.Join(lines, "\n"), Step: name, Path: s.Path, Pos: s.Pos})
}

// detail is the second line of a step's label: what the step does.
func detail(s *spec.Step) string {
	switch s.Kind {
	case spec.KindActivity:
		return s.Plugin + "." + s.Activity
	case spec.KindParallel:
		return fmt.Sprintf("parallel (%d branches)", len(s.Parallel))
	case spec.KindForEach:
		d := "for each " + s.As
		if s.Concurrency > 1 {
			d += fmt.Sprintf(", %d at once", s.Concurrency)
		}
		return d
	case spec.KindDelay:
		if s.DelayUntil != nil {
			return "timer: until a time"
		}
		return "timer: " + s.Delay.D.String()
	case spec.KindWaitForSignal:
		return "wait for signal " + s.Signal
	case spec.KindRunWorkflow:
		return "run workflow " + s.RunWorkflow
	case spec.KindWaitForWorkflow:
		return "wait for child workflow"
	case spec.KindContinueAsNew:
		return "continue as new"
	case spec.KindFail:
		if s.Fail != nil && s.Fail.Type != "" {
			return "fail " + s.Fail.Type
		}
		return "fail"
	case spec.KindSteps:
		return "steps"
	}
	return string(s.Kind)
}
