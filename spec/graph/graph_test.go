package graph

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wendflow/wend/spec"
)

var formats = []struct {
	ext    string
	render func(io.Writer, *Graph) error
}{{"mmd", Mermaid}, {"dot", Dot}, {"svg", SVG}}

// Every example workflow is drawn in each format as its golden file says. UPDATE=1
// rewrites the golden files.
func TestGoldenExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.wend.yaml")
	more, _ := filepath.Glob("../../examples/failures/*.wend.yaml")
	files = append(files, more...)
	if len(files) < 10 {
		t.Fatalf("found %d example files; the glob is wrong", len(files))
	}
	update := os.Getenv("UPDATE") != ""
	l := &spec.Loader{}
	for _, f := range files {
		if strings.HasSuffix(f, ".test.yaml") {
			continue
		}
		w, ds, err := l.LoadFile(f)
		if err != nil || ds.HasErrors() {
			t.Fatalf("%s: %v %v", f, err, ds)
		}
		g := Build(w)
		base := strings.TrimSuffix(filepath.Base(f), ".wend.yaml")
		if filepath.Base(filepath.Dir(f)) == "failures" {
			base = "failures-" + base
		}
		for _, fm := range formats {
			var b bytes.Buffer
			if err := fm.render(&b, g); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", base+"."+fm.ext)
			if update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run UPDATE=1 go test ./spec/graph -run Golden to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from %s:\n%s", f, golden, b.String())
			}
		}
	}
}

const shapes = `wend: v1
name: shapes
plugins: {p: ./p}
steps:
  - id: first
    activity: p.a
    catch:
      - id: fallback
        activity: p.b
    compensate_with: {activity: p.undo}
  - parallel:
      - {id: left, activity: p.a}
      - {id: right, delay: 5s}
  - id: each
    for_each: [1, 2]
    steps:
      - {id: body, activity: p.a}
  - {id: approve, wait_for_signal: ok}
  - {id: child, run_workflow: child.wend.yaml}
on_cancel:
  - {id: tidy, activity: p.undo}
`

// The model holds each construct the drawing must show: step nodes by id, a parallel's
// fork and join, a for_each with its body and loop, catch and compensate edges, timers,
// waits, child workflows and on_cancel.
func TestBuildShapes(t *testing.T) {
	g := build(t, shapes)
	kinds := map[string]NodeKind{}
	byID := map[string]string{}
	for _, n := range g.Nodes {
		byID[n.ID] = n.Step
		if n.Step != "" {
			kinds[n.Step] = n.Kind
		}
	}
	want := map[string]NodeKind{"first": "activity", "fallback": "activity", "steps[0].compensate_with": "activity",
		"steps[1]": "parallel", "left": "activity", "right": "delay", "each": "for_each", "body": "activity",
		"approve": "wait_for_signal", "child": "run_workflow", "tidy": "activity"}
	for step, k := range want {
		if kinds[step] != k {
			t.Errorf("step %s: kind %q, want %q (nodes %v)", step, kinds[step], k, kinds)
		}
	}
	edges := map[string]bool{}
	for _, e := range g.Edges {
		edges[byID[e.From]+" "+string(e.Kind)+" "+byID[e.To]] = true
	}
	for _, e := range []string{"first catch fallback", "first compensate steps[0].compensate_with", "first next steps[1]",
		"fallback next steps[1]", "steps[1] branch left", "steps[1] branch right", "each body body", "body loop each",
		"each next approve", "approve next child"} {
		if !edges[e] {
			t.Errorf("no edge %q in %v", e, edges)
		}
	}
}

func build(t *testing.T, src string) *Graph {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"x.wend.yaml": src, "child.wend.yaml": "wend: v1\nname: child\nsteps: [{delay: 1s}]\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, ds, err := (&spec.Loader{}).LoadFile(filepath.Join(dir, "x.wend.yaml"))
	if err != nil || ds.HasErrors() {
		t.Fatal(err, ds)
	}
	return Build(w)
}

// hostile are step names that try to break out of a label in each format.
var hostile = []string{`a"b`, `x] --> evil[y`, "line\nbreak", `<script>alert(1)</script>`, `}} digraph {`, `\" ]; n9 [label="x`, "a#quot;b", "|pipe|", "\x01ctl", "&amp;"}

// A hostile name stays inside its label: Mermaid lines are one node or one edge each, dot
// strings are closed where they should be, and the SVG parses with no element the drawing
// did not write.
func TestHostileNames(t *testing.T) {
	g := &Graph{Name: strings.Join(hostile, " ")}
	for i, h := range hostile {
		g.Nodes = append(g.Nodes, Node{ID: "n" + string(rune('a'+i)), Kind: "activity", Label: h + "\n" + h, Step: h})
	}
	for i := 1; i < len(g.Nodes); i++ {
		g.Edges = append(g.Edges, Edge{From: g.Nodes[i-1].ID, To: g.Nodes[i].ID, Kind: EdgeCatch})
	}
	var m, d bytes.Buffer
	if err := Mermaid(&m, g); err != nil {
		t.Fatal(err)
	}
	mLine := regexp.MustCompile(`^(%% .*|flowchart TD|  n[a-z]\[\"[A-Za-z0-9 _.,:/=+*$@!?#;<>br]*\"\]|  n[a-z] -->\|catch\| n[a-z])$`)
	for _, ln := range strings.Split(strings.TrimSuffix(m.String(), "\n"), "\n") {
		if !mLine.MatchString(ln) {
			t.Errorf("mermaid line not one node or edge: %q", ln)
		}
	}
	if strings.Contains(m.String(), "<script") {
		t.Errorf("mermaid kept markup:\n%s", m.String())
	}
	if err := Dot(&d, g); err != nil {
		t.Fatal(err)
	}
	checkDot(t, d.String(), len(g.Nodes), len(g.Edges))
	checkSVG(t, g)
}

// checkDot asserts every statement line is one node or one edge with quoted strings closed.
func checkDot(t *testing.T, s string, nodes, edges int) {
	t.Helper()
	str := `"(?:[^"\\\n]|\\.)*"`
	node := regexp.MustCompile(`^  n[a-z0-9]+ \[label=` + str + `[^"\n]*\];$`)
	edge := regexp.MustCompile(`^  n[a-z0-9]+ -> n[a-z0-9]+( \[[^"\n]*` + str + `[^"\n]*\])?;$`)
	head := regexp.MustCompile(`^digraph ` + str + ` \{$`)
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if !head.MatchString(lines[0]) || lines[len(lines)-1] != "}" {
		t.Fatalf("dot not one digraph:\n%s", s)
	}
	n, e := 0, 0
	for _, ln := range lines[4 : len(lines)-1] {
		switch {
		case node.MatchString(ln):
			n++
		case edge.MatchString(ln):
			e++
		default:
			t.Errorf("dot line not one node or edge: %q", ln)
		}
	}
	if n != nodes || e != edges {
		t.Errorf("dot has %d nodes and %d edges, want %d and %d", n, e, nodes, edges)
	}
}

// checkSVG renders g and parses it back: well-formed XML, only the elements the renderer
// writes, and each node's name back as text.
func checkSVG(t *testing.T, g *Graph) {
	t.Helper()
	var b bytes.Buffer
	if err := SVG(&b, g); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"svg": true, "title": true, "defs": true, "marker": true, "path": true, "g": true, "rect": true, "text": true}
	dec := xml.NewDecoder(&b)
	groups := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("svg does not parse: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if !known[se.Name.Local] {
				t.Fatalf("svg holds a <%s> the renderer never writes", se.Name.Local)
			}
			if se.Name.Local == "g" {
				groups++
			}
		}
	}
	if groups != len(g.Nodes) {
		t.Fatalf("svg has %d node groups, want %d", groups, len(g.Nodes))
	}
}

// The renderers never fail or write malformed output, whatever the names.
func FuzzRenderers(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, h)
	}
	f.Fuzz(func(t *testing.T, name, label string) {
		g := &Graph{Name: name, Nodes: []Node{{ID: "n0", Kind: NodeStart, Label: "start"},
			{ID: "n1", Kind: "for_each", Label: label, Step: name}, {ID: "n2", Kind: "activity", Label: name + "\n" + label}}}
		g.Edges = []Edge{{"n0", "n1", EdgeNext}, {"n1", "n2", EdgeBody}, {"n2", "n1", EdgeLoop}}
		checkSVG(t, g)
		var d, m bytes.Buffer
		if Dot(&d, g) != nil || Mermaid(&m, g) != nil {
			t.Fatal("render failed")
		}
		checkDot(t, d.String(), 3, 3)
		if strings.Count(m.String(), "\n") != 2+3+3 {
			t.Fatalf("mermaid lines: %q", m.String())
		}
	})
}
