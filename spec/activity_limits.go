package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Limit is one entry of a workflow's `limits:` (docs/language.md): how many calls of an
// activity may run at once, and how many may start per period, across every run the engine
// drives. A call over it waits before its try starts.
type Limit struct {
	Activity    string // plugin.activity
	Concurrency int    // tries in progress at once; 0: unbounded
	Rate        Rate   // tries started per period; zero: unbounded
	Pos         Pos
}

// Rate is N starts per Per: at most N in any window of Per. The zero Rate bounds nothing.
type Rate struct {
	N   int
	Per time.Duration
}

// IsSet says whether r bounds anything.
func (r Rate) IsSet() bool { return r.N > 0 }

func (r Rate) String() string {
	if !r.IsSet() {
		return ""
	}
	for unit, d := range rateUnits {
		if d == r.Per {
			return fmt.Sprintf("%d/%s", r.N, unit)
		}
	}
	return fmt.Sprintf("%d/%s", r.N, r.Per)
}

// Bounds of a limit: each waiting or running call costs memory, and a rate keeps its last N
// start times.
const (
	MaxLimitConcurrency = 1_000_000
	MaxRateCount        = 100_000
)

var rateUnits = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

var rateSyntax = regexp.MustCompile(`^([0-9]+)/(s|m|h)$`)

// ParseRate reads N/s, N/m or N/h.
func ParseRate(s string) (Rate, error) {
	m := rateSyntax.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Rate{}, fmt.Errorf("rate %q: write N/s, N/m or N/h, e.g. 10/s", s)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 || n > MaxRateCount {
		return Rate{}, fmt.Errorf("rate %q: the count must be from 1 to %d", s, MaxRateCount)
	}
	return Rate{N: n, Per: rateUnits[m[2]]}, nil
}

// limitPath is the path of a limit in messages: its key holds a dot, so it is quoted as the
// schema's findings quote it.
func limitPath(name string) string {
	if plainKey(name) {
		return "limits." + name
	}
	return "limits[" + strconv.Quote(name) + "]"
}

// limits decodes `limits:`; checkLimits checks the names against the plugins and steps.
func (d *decoder) limits(w *Workflow, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return // the JSON Schema says what it should be
	}
	w.Limits = map[string]*Limit{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := limitPath(k.Value)
		l := &Limit{Activity: k.Value, Pos: posOf(k)}
		if v.Kind != yaml.MappingNode {
			continue
		}
		d.fields(v, path, []string{"concurrency", "rate"}, func(key string, _, v2 *yaml.Node) {
			switch key {
			case "concurrency":
				l.Concurrency = integer(v2, 0) // out of range: the schema says it
			case "rate":
				if v2.Kind != yaml.ScalarNode {
					return
				}
				r, err := ParseRate(v2.Value)
				if err != nil {
					d.errorf(v2, joinKey(path, key), "%v", err)
					return
				}
				l.Rate = r
			}
		})
		if len(v.Content) == 0 {
			d.errorf(v, path, "give concurrency, rate or both, e.g. {concurrency: 5, rate: 10/s}")
		}
		w.Limits[l.Activity] = l
		w.LimitOrder = append(w.LimitOrder, l.Activity)
	}
}

// limits checks that each limit names an activity a step of the file calls: a limit on a
// name no step uses bounds nothing, which is most likely a typo.
func (c *checker) limits() {
	if len(c.w.Limits) == 0 {
		return
	}
	called := map[string]bool{}
	var names []string
	c.w.Walk(func(s *Step) {
		if s.Kind == KindActivity && s.Plugin != "" {
			name := s.Plugin + "." + s.Activity
			if !called[name] {
				called[name] = true
				names = append(names, name)
			}
		}
	})
	for _, name := range c.w.LimitOrder {
		l := c.w.Limits[name]
		if called[name] || !strings.Contains(name, ".") {
			continue // the schema reports a name without a dot
		}
		msg := fmt.Sprintf("no step of this workflow calls %s, so this limit bounds nothing", name)
		if sug := suggest(name, names); sug != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sug)
		}
		c.errorf(l.Pos, limitPath(name), "%s", msg)
	}
}
