package graph

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// A marked drawing gives each marked step its state as a class, a data-state and a last line
// of text, a link where the mark has one, and the current wait a class of its own; hostile
// texts and links stay text, and ids carry the prefix.
func TestMarks(t *testing.T) {
	g := build(t, shapes)
	marks := map[string]Mark{
		"steps[0]": {State: "failed", Text: "failed <b>", Href: `/ui/runs/x?step=steps[0]"><script>`},
		"steps[3]": {State: "waiting", Text: "waiting for signal ok", Current: true, Href: "/ui/runs/x?step=steps%5B3%5D"},
		"steps[2]": {State: `running" onclick="x`, Text: "running\n2 items: 1 completed, 1 running"},
	}
	var b bytes.Buffer
	if err := SVGWith(&b, g, Options{Marks: marks, IDPrefix: "g-", Class: "graph"}); err != nil {
		t.Fatal(err)
	}
	type node struct {
		class, state, path, href, id string
		text                         []string
	}
	var nodes []node
	var cur *node
	inState := false
	out := b.String()
	dec := xml.NewDecoder(&b)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("svg does not parse: %v\n%s", err, out)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch e.Name.Local {
			case "g":
				nodes = append(nodes, node{class: attr["class"], state: attr["data-state"], path: attr["data-path"], id: attr["id"]})
				cur = &nodes[len(nodes)-1]
			case "a":
				cur.href = attr["href"]
			case "tspan":
				inState = true
			case "svg", "title", "defs", "marker", "path", "rect", "text":
			default:
				t.Fatalf("svg holds a <%s> the renderer never writes", e.Name.Local)
			}
			if id := attr["id"]; id != "" && !strings.HasPrefix(id, "g-") {
				t.Errorf("id %q lacks the prefix", id)
			}
		case xml.EndElement:
			if e.Name.Local == "tspan" {
				inState = false
			}
		case xml.CharData:
			if inState && cur != nil {
				cur.text = append(cur.text, string(e))
			}
		}
	}
	got := map[string]node{}
	for _, n := range nodes {
		if n.path != "" {
			got[n.path] = n
		}
	}
	if len(got) != 3 {
		t.Fatalf("marked nodes %v, want the 3 marked steps", got)
	}
	want := map[string]node{
		"steps[0]": {class: "node st-failed", state: "failed", href: `/ui/runs/x?step=steps[0]"><script>`, text: []string{"failed <b>"}},
		"steps[3]": {class: "node st-waiting current", state: "waiting", href: "/ui/runs/x?step=steps%5B3%5D", text: []string{"waiting for signal ok"}},
		"steps[2]": {class: "node st-runningonclickx", state: "runningonclickx", text: []string{"running", "2 items: 1 completed, 1 running"}},
	}
	for p, w := range want {
		n := got[p]
		if n.class != w.class || n.state != w.state || n.href != w.href || strings.Join(n.text, "") != strings.Join(w.text, "") {
			t.Errorf("%s drawn as %+v, want %+v", p, n, w)
		}
	}
	if !strings.Contains(out, `marker-end="url(#g-arrow)"`) {
		t.Error("edges do not point at the prefixed arrow")
	}
}

// Whatever a mark says, the drawing parses and holds only the elements the renderer writes.
func FuzzMarks(f *testing.F) {
	f.Add("failed", "failed <b>\nline", `"><script>x</script>`, true)
	f.Add(`a" b`, "\x00\x01", "javascript:alert(1)", false)
	f.Fuzz(func(t *testing.T, state, text, href string, current bool) {
		g := &Graph{Name: "m", Nodes: []Node{{ID: "n0", Kind: NodeStart, Label: "start"},
			{ID: "n1", Kind: "activity", Label: "a", Step: "a", Path: "steps[0]"}, {ID: "n2", Kind: NodeEnd, Label: "end"}},
			Edges: []Edge{{"n0", "n1", EdgeNext}, {"n1", "n2", EdgeNext}}}
		var b bytes.Buffer
		if err := SVGWith(&b, g, Options{Marks: map[string]Mark{"steps[0]": {State: state, Text: text, Href: href, Current: current}}, IDPrefix: "g-"}); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(&b)
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("svg does not parse: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				switch se.Name.Local {
				case "svg", "title", "defs", "marker", "path", "g", "rect", "text", "a", "tspan":
				default:
					t.Fatalf("svg holds a <%s>", se.Name.Local)
				}
			}
		}
	})
}

// A Styled drawing is the same drawing (every element, position and text) with its colours,
// anchors, weights and markers left to the page's stylesheet, and the classes it needs for
// them: each label line, a loop's inner box, each edge's label.
func TestStyled(t *testing.T) {
	g := build(t, shapes)
	marks := map[string]Mark{"steps[0]": {State: "failed", Text: "failed", Href: "/x"}}
	var plain, styled bytes.Buffer
	if err := SVGWith(&plain, g, Options{Marks: marks, IDPrefix: "g-", Class: "graph"}); err != nil {
		t.Fatal(err)
	}
	if err := SVGWith(&styled, g, Options{Marks: marks, IDPrefix: "g-", Class: "graph", Styled: true}); err != nil {
		t.Fatal(err)
	}
	type el struct {
		name  string
		geom  string // x, y, width, height, rx, d
		text  string
		class string
	}
	read := func(svg []byte) (els []el, presentation []string) {
		dec := xml.NewDecoder(bytes.NewReader(svg))
		inMarker := false
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				return els, presentation
			}
			if err != nil {
				t.Fatalf("svg does not parse: %v", err)
			}
			switch e := tok.(type) {
			case xml.StartElement:
				if e.Name.Local == "marker" {
					inMarker = true
				}
				x := el{name: e.Name.Local}
				for _, a := range e.Attr {
					switch a.Name.Local {
					case "x", "y", "width", "height", "rx", "d":
						x.geom += a.Name.Local + "=" + a.Value + " "
					case "class":
						x.class = a.Value
					case "fill", "stroke", "stroke-dasharray", "text-anchor", "font-weight", "font-size", "marker-end":
						if !inMarker && e.Name.Local != "svg" { // the root's font is the drawing's own
							presentation = append(presentation, e.Name.Local+" "+a.Name.Local)
						}
					}
				}
				els = append(els, x)
			case xml.EndElement:
				if e.Name.Local == "marker" {
					inMarker = false
				}
			case xml.CharData:
				if len(els) > 0 {
					els[len(els)-1].text += string(e)
				}
			}
		}
	}
	pe, pp := read(plain.Bytes())
	se, sp := read(styled.Bytes())
	if len(sp) != 0 {
		t.Errorf("a styled drawing paints: %v", sp)
	}
	if len(pp) == 0 {
		t.Error("the plain drawing lost its paint")
	}
	if len(pe) != len(se) {
		t.Fatalf("%d elements styled, %d plain", len(se), len(pe))
	}
	labels, inner, edgeLabels := 0, 0, 0
	for i := range pe {
		if pe[i].name != se[i].name || pe[i].geom != se[i].geom || pe[i].text != se[i].text {
			t.Errorf("element %d: styled %+v, plain %+v", i, se[i], pe[i])
		}
		switch se[i].class {
		case "label":
			labels++
		case "inner":
			inner++
		case "edge-label":
			edgeLabels++
		}
	}
	if labels == 0 || inner == 0 || edgeLabels == 0 {
		t.Errorf("classes: %d labels, %d inner boxes, %d edge labels; want some of each", labels, inner, edgeLabels)
	}
	if styled.Len() >= plain.Len()*4/5 {
		t.Errorf("styled %d bytes, plain %d: not a fifth less", styled.Len(), plain.Len())
	}
}
