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
