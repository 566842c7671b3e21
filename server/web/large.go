package web

import (
	"net/url"
	"strconv"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
)

// A run's page stays small however long its loops are: the activities of a for_each's
// instances collapse into one summary row per loop step (counts by status) that a link
// expands a page at a time, and the events are shown a page at a time, the newest page
// first, in full (a table with data) or compact (one line each).
const (
	groupPageSize = 50  // activity cards of an expanded loop step per page
	cardPageSize  = 50  // entries of the activities section (a card, or a loop step's group) per page
	rowPageSize   = 100 // rows of the step table and of the timeline per page
	eventPageSize = 100 // events per page
	tableCap      = 50  // rows of the failures, compensations, children, timers and signals tables
)

// pageParams are the query parameters a run's page keeps across its links and live refresh.
var pageParams = []string{"expand", "apage", "cpage", "tpage", "epage", "events", "step", "spage"}

// activityItem is one entry of the activities section: an activity's card, or a loop step's
// summary with, when expanded, a page of its instances' cards.
type activityItem struct {
	Activity *export.Activity
	Group    *activityGroup
}

// activityGroup summarises the activities of one step inside a for_each, over its instances.
type activityGroup struct {
	Path     string // the static step path
	N        int
	Counts   []statusN // by status, in first-seen order
	Expanded bool
	Shown    []export.Activity // the expanded page
	Page     int
	Pages    int
}

type statusN struct {
	Status string
	N      int
}

// activityLayout is the activities section worked out once per fold: its entries in order
// (an activity outside loops, or a loop step's group placed where its first activity was),
// and per group its members and counts by status.
type activityLayout struct {
	entries []layoutEntry
	groups  map[string]*layoutGroup // by static path
}

type layoutEntry struct {
	act   int    // index into the activities, when group is ""
	group string // the static path of a loop step's group
}

type layoutGroup struct {
	members []int // indexes into the activities
	counts  []statusN
}

// layoutActivities lays out the activities: those outside loops as cards, those inside as
// one group per static step path, placed where its first activity was.
func layoutActivities(acts []export.Activity) activityLayout {
	l := activityLayout{groups: map[string]*layoutGroup{}}
	for i := range acts {
		a := &acts[i]
		static := runview.StaticPath(a.Step)
		if static == a.Step {
			l.entries = append(l.entries, layoutEntry{act: i})
			continue
		}
		g := l.groups[static]
		if g == nil {
			g = &layoutGroup{}
			l.groups[static] = g
			l.entries = append(l.entries, layoutEntry{group: static})
		}
		g.members = append(g.members, i)
		found := false
		for j := range g.counts {
			if g.counts[j].Status == a.Status {
				g.counts[j].N++
				found = true
			}
		}
		if !found {
			g.counts = append(g.counts, statusN{Status: a.Status, N: 1})
		}
	}
	return l
}

// page is page p of the section's entries (cardPageSize a page), the group expand names
// showing page apage of its cards.
func (l activityLayout) page(acts []export.Activity, expand string, apage, p int) ([]activityItem, pager) {
	pg := pageOf(len(l.entries), cardPageSize, p)
	var items []activityItem
	for _, e := range l.entries[pg.lo:pg.hi] {
		if e.group == "" {
			items = append(items, activityItem{Activity: &acts[e.act]})
			continue
		}
		lg := l.groups[e.group]
		g := &activityGroup{Path: e.group, N: len(lg.members), Counts: lg.counts, Expanded: e.group == expand}
		if g.Expanded {
			gp := pageOf(g.N, groupPageSize, apage)
			g.Page, g.Pages = gp.Page, gp.Pages
			for _, i := range lg.members[gp.lo:gp.hi] {
				g.Shown = append(g.Shown, acts[i])
			}
		}
		items = append(items, activityItem{Group: g})
	}
	return items, pg
}

// pager is one page of n rows: rows [lo, hi) of page Page of Pages (1-based).
type pager struct {
	Page, Pages, N int
	lo, hi         int
}

// pageOf is page p (clamped to the pages there are) of n rows, size a page.
func pageOf(n, size, p int) pager {
	pg := pager{N: n, Pages: max(1, (n+size-1)/size)}
	pg.Page = min(max(p, 1), pg.Pages)
	pg.lo = (pg.Page - 1) * size
	pg.hi = min(pg.lo+size, n)
	return pg
}

// eventPage is the page of the events the page shows.
type eventPage struct {
	Events  []export.Event // in seq order
	Page    int            // 1 holds the newest events, Pages the oldest
	Pages   int
	Total   int
	Compact bool
}

// pageEvents picks page p of evs, counting pages back from the newest event so the first
// page is always full and shows where an open run is now. Only that page is converted.
func pageEvents(evs []history.Event, p int, compact bool) eventPage {
	ep := eventPage{Total: len(evs), Compact: compact}
	ep.Pages = max(1, (len(evs)+eventPageSize-1)/eventPageSize)
	ep.Page = min(max(p, 1), ep.Pages)
	hi := len(evs) - (ep.Page-1)*eventPageSize
	ep.Events = export.EventsOf(evs[max(0, hi-eventPageSize):hi])
	return ep
}

// With is this page's URL with the query parameter key set to value (removed when empty),
// keeping the others of pageParams; templates build the page's links with it.
func (v *runView) With(key, value string) string {
	q := url.Values{}
	for _, k := range pageParams {
		if s := v.params.Get(k); s != "" {
			q.Set(k, s)
		}
	}
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	if key == "expand" {
		q.Del("apage")
	}
	if key == "step" {
		q.Del("spage")
	}
	if len(q) == 0 {
		return v.URL
	}
	return v.URL + "?" + q.Encode()
}

// WithPage is With for a page number.
func (v *runView) WithPage(key string, n int) string { return v.With(key, strconv.Itoa(n)) }

// liveURL is the page's URL asking for its live part.
func (v *runView) liveURL() string {
	u := v.With("partial", "live")
	return u
}

// Cap is how many rows the page's other tables show (tableCap).
func (v *runView) Cap() int { return tableCap }

// activityCard is what the "activity" template reads: the page and one activity.
type activityCard struct {
	V *runView
	X any // export.Activity or *export.Activity
}
