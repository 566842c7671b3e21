package testsuite

import (
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// labels names steps for people: the id of the nearest step with one, then the rest of the
// path ("charge.catch[0]"), keeping for_each item numbers ("pack@2.steps[0]").
type labels struct {
	ids   map[string]string // static path -> id
	steps map[string]*spec.Step
}

func newLabels(w *spec.Workflow) *labels {
	l := &labels{ids: map[string]string{}, steps: map[string]*spec.Step{}}
	w.Walk(func(s *spec.Step) {
		l.steps[s.Path] = s
		if s.ID != "" {
			l.ids[s.Path] = s.ID
		}
	})
	return l
}

func (l *labels) label(path string) string {
	if path == "" {
		return ""
	}
	var out, st strings.Builder
	var items []string // for_each item numbers on the way, kept when an inner id takes over
	for i, seg := range strings.Split(path, ".") {
		name, item, hasItem := strings.Cut(seg, "@")
		if i > 0 {
			st.WriteByte('.')
		}
		st.WriteString(name)
		if id, ok := l.ids[st.String()]; ok {
			out.Reset()
			out.WriteString(id)
			for _, it := range items {
				out.WriteString("@" + it)
			}
		} else {
			if out.Len() > 0 {
				out.WriteByte('.')
			}
			out.WriteString(name)
		}
		if hasItem {
			out.WriteString("@" + item)
			items = append(items, item)
		}
	}
	return out.String()
}

// matches reports whether a step reference from a test file (an id, a label or a path)
// names the step at path or one of the steps it is inside.
func (l *labels) matches(ref, path string) bool {
	if ref == path || ref == l.label(path) || ref == history.StaticStepPath(l.label(path)) || ref == history.StaticStepPath(path) {
		return true
	}
	st := history.StaticStepPath(path)
	for p := st; p != ""; {
		if l.ids[p] == ref {
			return true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return false
}
