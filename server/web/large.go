package web

import (
	"net/url"
	"strconv"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
)

// A run's page stays small however long its loops are: the activities of a for_each's
// instances collapse into one summary row per loop step (counts by status) that a link
// expands a page at a time, and the events are shown a page at a time, the newest page
// first, in full (a table with data) or compact (one line each).
const (
	groupPageSize = 50  // activity cards of an expanded loop step per page
	eventPageSize = 100 // events per page
	tableCap      = 50  // rows of the failures, compensations, children, timers and signals tables
)

// pageParams are the query parameters a run's page keeps across its links and live refresh.
var pageParams = []string{"expand", "apage", "epage", "events", "step", "spage"}

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

// groupActivities lays out the activities: those outside loops as cards, those inside as
// one group per static step path, placed where its first activity was.
func groupActivities(acts []export.Activity, expand string, page int) []activityItem {
	var items []activityItem
	groups := map[string]*activityGroup{}
	members := map[string][]int{}
	for i := range acts {
		a := &acts[i]
		static := runview.StaticPath(a.Step)
		if static == a.Step {
			items = append(items, activityItem{Activity: a})
			continue
		}
		g := groups[static]
		if g == nil {
			g = &activityGroup{Path: static, Expanded: static == expand}
			groups[static] = g
			items = append(items, activityItem{Group: g})
		}
		g.N++
		members[static] = append(members[static], i)
		found := false
		for j := range g.Counts {
			if g.Counts[j].Status == a.Status {
				g.Counts[j].N++
				found = true
			}
		}
		if !found {
			g.Counts = append(g.Counts, statusN{Status: a.Status, N: 1})
		}
	}
	if g := groups[expand]; g != nil {
		g.Pages = max(1, (g.N+groupPageSize-1)/groupPageSize)
		g.Page = min(max(page, 1), g.Pages)
		idx := members[expand]
		lo := (g.Page - 1) * groupPageSize
		for _, i := range idx[lo:min(lo+groupPageSize, len(idx))] {
			g.Shown = append(g.Shown, acts[i])
		}
	}
	return items
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
// page is always full and shows where an open run is now.
func pageEvents(evs []export.Event, p int, compact bool) eventPage {
	ep := eventPage{Total: len(evs), Compact: compact}
	ep.Pages = max(1, (len(evs)+eventPageSize-1)/eventPageSize)
	ep.Page = min(max(p, 1), ep.Pages)
	hi := len(evs) - (ep.Page-1)*eventPageSize
	ep.Events = evs[max(0, hi-eventPageSize):hi]
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
