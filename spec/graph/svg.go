package graph

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Layout sizes, in SVG user units.
const (
	charW   = 7  // average width of a 12px sans-serif character
	lineH   = 16 // one label line
	padX    = 12 // inside a box, each side
	padY    = 8
	gapX    = 30 // between boxes of a layer
	gapY    = 50 // between layers
	margin  = 20
	maxLine = 48 // label lines are cut here so one long name cannot stretch the drawing
)

type box struct {
	x, y, w, h int // top-left corner and size
	layer      int
	lines      []string
}

// SVG writes g as a standalone SVG drawing, laid out in layers: a node sits one layer below
// the lowest node that leads to it (loop edges aside), nodes of a layer side by side in file
// order.
func SVG(w io.Writer, g *Graph) error { return SVGWith(w, g, Options{}) }

// SVGWith is SVG drawn as Options say: with a run's marks on its steps, for a page that
// holds the drawing inline.
func SVGWith(w io.Writer, g *Graph, o Options) error {
	if len(o.Marks) > 0 || o.Name != nil {
		g = marked(g, o.Marks, o.Name)
	}
	boxes, minX, width, height := layout(g)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12"`, width, height, width, height)
	if o.Class != "" {
		b.WriteString(` class="`)
		xmlText(&b, o.Class)
		b.WriteString(`"`)
	}
	b.WriteString(">\n<title>")
	xmlText(&b, g.Name)
	b.WriteString("</title>\n")
	arrow := o.IDPrefix + "arrow"
	fmt.Fprintf(&b, `<defs><marker id="%s" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>`+"\n", idText(arrow))
	for _, e := range g.Edges {
		from, to := boxes[e.From], boxes[e.To]
		if from == nil || to == nil {
			continue
		}
		edgeSVG(&b, e, from, to, minX, idText(arrow), o.Styled)
	}
	for _, n := range g.Nodes {
		m, ok := o.Marks[n.Path]
		if n.Step == "" {
			ok = false // start, end and join have no state of their own
		}
		nodeSVG(&b, n, boxes[n.ID], o.IDPrefix, m, ok, o.Styled)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// layout places the boxes and returns them, each layer's leftmost x, and the drawing's size.
func layout(g *Graph) (map[string]*box, []int, int, int) {
	index := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		index[n.ID] = i
	}
	// Longest path from the roots over the forward edges (every edge but a loop's), in
	// Kahn's order: the model's forward edges never form a cycle.
	in := make([]int, len(g.Nodes))
	out := make([][]int, len(g.Nodes))
	for _, e := range g.Edges {
		f, okf := index[e.From]
		t, okt := index[e.To]
		if e.Kind == EdgeLoop || !okf || !okt {
			continue
		}
		in[t]++
		out[f] = append(out[f], t)
	}
	// What follows a for_each sits below its body, so the loop edge crosses no box.
	for _, e := range g.Edges {
		if e.Kind != EdgeLoop {
			continue
		}
		body, okb := index[e.From]
		each, oke := index[e.To]
		if !okb || !oke {
			continue
		}
		for _, next := range g.Edges {
			if t, ok := index[next.To]; ok && next.From == e.To && next.Kind != EdgeBody && t != body && t != each {
				in[t]++
				out[body] = append(out[body], t)
			}
		}
	}
	layer := make([]int, len(g.Nodes))
	var queue []int
	for i := range g.Nodes {
		if in[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, t := range out[i] {
			layer[t] = max(layer[t], layer[i]+1)
			if in[t]--; in[t] == 0 {
				queue = append(queue, t)
			}
		}
	}
	var layers [][]int
	for i := range g.Nodes {
		for len(layers) <= layer[i] {
			layers = append(layers, nil)
		}
		layers[layer[i]] = append(layers[layer[i]], i)
	}
	boxes := make(map[string]*box, len(g.Nodes))
	rowW := make([]int, len(layers))
	rowH := make([]int, len(layers))
	for l, row := range layers {
		for _, i := range row {
			bx := &box{lines: labelLines(g.Nodes[i].Label), layer: l}
			for _, ln := range bx.lines {
				bx.w = max(bx.w, utf8.RuneCountInString(ln)*charW+2*padX)
			}
			bx.w = max(bx.w, 60)
			bx.h = len(bx.lines)*lineH + 2*padY
			boxes[g.Nodes[i].ID] = bx
			if rowW[l] > 0 {
				rowW[l] += gapX
			}
			rowW[l] += bx.w
			rowH[l] = max(rowH[l], bx.h)
		}
	}
	width := 0
	for _, w := range rowW {
		width = max(width, w)
	}
	width += 2*margin + 80 // room on the right for loop edges
	y := margin
	minX := make([]int, len(layers))
	for l, row := range layers {
		x := margin + (width-80-2*margin-rowW[l])/2
		minX[l] = x
		for _, i := range row {
			bx := boxes[g.Nodes[i].ID]
			bx.x, bx.y = x, y+(rowH[l]-bx.h)/2
			x += bx.w + gapX
		}
		y += rowH[l] + gapY
	}
	return boxes, minX, width, y - gapY + margin
}

// labelLines splits a label into lines, each cut to maxLine characters.
func labelLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, ln := range lines {
		if utf8.RuneCountInString(ln) > maxLine {
			lines[i] = string([]rune(ln)[:maxLine-1]) + "…"
		}
	}
	return lines
}

func nodeSVG(b *bytes.Buffer, n Node, bx *box, prefix string, m Mark, marked, styled bool) {
	fill, rx := "#eef3fb", 6
	switch n.Kind {
	case NodeStart, NodeEnd, NodeCancelled:
		fill, rx = "#e8e8e8", bx.h/2
	case NodeJoin, "parallel":
		fill = "#f3eefb"
	case "for_each":
		fill = "#eefbf1"
	case "delay", "wait_for_signal", "wait_for_workflow":
		fill, rx = "#fdf6e3", bx.h/2
	case "run_workflow":
		fill = "#e3f6fd"
	case "fail":
		fill = "#fbeeee"
	}
	b.WriteString(`<g class="node`)
	if marked {
		b.WriteString(" st-")
		xmlText(b, classWord(m.State))
		if m.Current {
			b.WriteString(" current")
		}
	}
	b.WriteString(`" data-kind="`)
	xmlText(b, string(n.Kind))
	b.WriteString(`" data-step="`)
	xmlText(b, n.Step)
	if marked {
		b.WriteString(`" data-path="`)
		xmlText(b, n.Path)
		b.WriteString(`" data-state="`)
		xmlText(b, classWord(m.State))
	}
	fmt.Fprintf(b, `" id="%s">`, idText(prefix+n.ID))
	if marked && m.Href != "" {
		b.WriteString(`<a href="`)
		xmlText(b, m.Href)
		b.WriteString(`">`)
	}
	b.WriteString("<title>")
	xmlText(b, n.Label)
	if n.Pos.Line > 0 {
		fmt.Fprintf(b, " (line %d)", n.Pos.Line)
	}
	b.WriteString("</title>")
	paint, inner, anchor, weight := ` fill="`+fill+`" stroke="#456"`, ` fill="none" stroke="#456"`, ` text-anchor="middle"`, ` font-weight="bold"`
	if styled {
		paint, inner, anchor, weight = "", ` class="inner"`, "", ` class="label"`
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" rx="%d"%s/>`, bx.x, bx.y, bx.w, bx.h, rx, paint)
	if n.Kind == "for_each" {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" rx="%d"%s/>`, bx.x+3, bx.y+3, bx.w-6, bx.h-6, rx, inner)
	}
	for i, ln := range bx.lines {
		w := ""
		if i == 0 {
			w = weight
		}
		fmt.Fprintf(b, `<text x="%d" y="%d"%s%s>`, bx.x+bx.w/2, bx.y+padY+(i+1)*lineH-4, anchor, w)
		if marked && i >= len(bx.lines)-m.stateLines() {
			b.WriteString(`<tspan class="state">`)
			xmlText(b, ln)
			b.WriteString("</tspan></text>")
			continue
		}
		xmlText(b, ln)
		b.WriteString("</text>")
	}
	if marked && m.Href != "" {
		b.WriteString("</a>")
	}
	b.WriteString("</g>\n")
}

func edgeSVG(b *bytes.Buffer, e Edge, from, to *box, minX []int, arrow string, styled bool) {
	color, dash := "#555", ""
	switch e.Kind {
	case EdgeCatch:
		color = "#c33"
	case EdgeCompensate, EdgeLoop:
		dash = ` stroke-dasharray="5,4"`
	}
	var d string
	lx, ly := 0, 0
	switch {
	case e.Kind == EdgeLoop || to.y <= from.y:
		// Back up the right side, from the body's last box to the for_each.
		x1, y1 := from.x+from.w, from.y+from.h/2
		x2, y2 := to.x+to.w, to.y+to.h/2
		cx := max(x1, x2) + 40
		d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, cx, y1, cx, y2, x2, y2)
		lx, ly = cx-10, (y1+y2)/2
	default:
		// An edge that skips layers runs down a lane left of the boxes it passes, so it
		// crosses none of them; between adjacent layers it bends across the gap.
		x1, y1 := from.x+from.w/2, from.y+from.h
		x2, y2 := to.x+to.w/2, to.y
		lane := x1
		for l := from.layer + 1; l < to.layer && l < len(minX); l++ {
			lane = min(lane, minX[l]-15)
		}
		if to.layer-from.layer <= 1 {
			d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, x1, (y1+y2)/2, x2, (y1+y2)/2, x2, y2)
			lx, ly = (x1+x2)/2+4, (y1+y2)/2
			break
		}
		ya, yb := y1+gapY/2, y2-gapY/2
		d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d L%d,%d C%d,%d %d,%d %d,%d",
			x1, y1, x1, ya, lane, y1, lane, ya, lane, yb, lane, y2, x2, yb, x2, y2)
		lx, ly = lane+4, ya
	}
	if styled {
		fmt.Fprintf(b, `<path class="edge" data-kind="%s" d="%s"/>`, e.Kind, d)
		if e.Kind != EdgeNext {
			fmt.Fprintf(b, `<text class="edge-label" data-kind="%s" x="%d" y="%d">%s</text>`, e.Kind, lx, ly, e.Kind)
		}
		b.WriteString("\n")
		return
	}
	fmt.Fprintf(b, `<path class="edge" data-kind="%s" d="%s" fill="none" stroke="%s"%s marker-end="url(#%s)"/>`, e.Kind, d, color, dash, arrow)
	if e.Kind != EdgeNext {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10" fill="%s">%s</text>`, lx, ly, color, e.Kind)
	}
	b.WriteString("\n")
}

// xmlText writes s escaped for XML text and attribute values; characters XML cannot hold
// become U+FFFD.
func xmlText(b *bytes.Buffer, s string) {
	_ = xml.EscapeText(b, []byte(s)) // a bytes.Buffer never fails a write
}
