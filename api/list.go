package api

import (
	"cmp"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
)

// Paging of GET /v1/runs.
const (
	DefaultListLimit = 100  // runs per page when the request names no limit
	MaxListLimit     = 1000 // the most runs one page holds
	MaxListQuery     = 256  // the longest q= accepted, in bytes
)

// ListQuery is what GET /v1/runs filters and pages by. Zero fields match everything.
type ListQuery struct {
	Status     string // exact status
	WorkflowID string // exact workflow id
	Name       string // exact workflow name (the spec's name:)
	// Q matches a case-insensitive substring of the workflow id or the run id.
	Q string
	// StartedAfter keeps runs started at or after it; StartedBefore those started strictly
	// before it, so adjacent ranges never share a run.
	StartedAfter, StartedBefore time.Time
	Limit                       int    // runs per page; 0 is DefaultListLimit
	Cursor                      string // a RunPage.NextCursor: the page after it
	// IDPrefix keeps runs whose workflow id or run id starts with it (where id ^= P).
	IDPrefix string
	// Search keeps runs whose search fields pass every clause (where customer = "ann").
	Search []history.SearchCond
}

// RunPage is one page of GET /v1/runs: runs newest first (by started_at, then run id, both
// descending). NextCursor is set when more runs match; pass it as cursor for the next page.
type RunPage struct {
	Runs       []history.Run `json:"runs"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// Values is q as GET /v1/runs's query parameters (the inverse of ParseListQuery).
func (q ListQuery) Values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("status", q.Status)
	set("workflow_id", q.WorkflowID)
	set("name", q.Name)
	set("q", q.Q)
	if !q.StartedAfter.IsZero() {
		v.Set("started_after", q.StartedAfter.Format(time.RFC3339Nano))
	}
	if !q.StartedBefore.IsZero() {
		v.Set("started_before", q.StartedBefore.Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	set("cursor", q.Cursor)
	set("where", q.whereText())
	return v
}

// whereText is the part of q only a filter can say (the id prefix and the search clauses), as
// filter text ParseWhere reads back; "" when q has neither.
func (q ListQuery) whereText() string {
	var cl []string
	if q.IDPrefix != "" {
		cl = append(cl, "id ^= "+QuoteWhere(q.IDPrefix))
	}
	for _, c := range q.Search {
		cl = append(cl, c.Field+" "+c.Op+" "+QuoteWhere(c.Value))
	}
	return strings.Join(cl, " and ")
}

// QuoteWhere quotes s as a where= filter reads a quoted string back: \ before " and \.
func QuoteWhere(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Match reports whether r passes q's filters (not its cursor or limit): the rule GET /v1/runs
// lists by, for a caller that filters runs it read itself (`wend list` on a database it
// opened), so both list the same runs.
func (q ListQuery) Match(r history.Run) bool { return q.match(r, strings.ToLower(q.Q)) }

// match is Match with q.Q already lower-cased, for loops over many runs.
func (q ListQuery) match(r history.Run, lowerQ string) bool {
	return (q.Status == "" || r.Status == q.Status) &&
		(q.WorkflowID == "" || r.WorkflowID == q.WorkflowID) &&
		(q.Name == "" || r.Name == q.Name) &&
		(lowerQ == "" || strings.Contains(strings.ToLower(r.WorkflowID), lowerQ) || strings.Contains(strings.ToLower(r.RunID), lowerQ)) &&
		(q.StartedAfter.IsZero() || !r.StartedAt.Before(q.StartedAfter)) &&
		(q.StartedBefore.IsZero() || r.StartedAt.Before(q.StartedBefore)) &&
		(q.IDPrefix == "" || strings.HasPrefix(r.WorkflowID, q.IDPrefix) || strings.HasPrefix(r.RunID, q.IDPrefix)) &&
		history.RunFilter{Search: q.Search}.Match(r)
}

// StoreFilter is the part of q the store filters by itself (history.RunFilter): what it reads
// through an index or from the run records; Match checks the rest.
func (q ListQuery) StoreFilter() history.RunFilter {
	return history.RunFilter{Status: q.Status, WorkflowID: q.WorkflowID, Search: q.Search}
}

// MergeWhere adds f, a parsed filter, to q's own filters (parameters or flags). A filter f
// sets that q sets too is refused, since which one holds would be a guess.
func (q *ListQuery) MergeWhere(f ListQuery) error {
	for _, c := range []struct {
		name string
		a, b bool
	}{
		{"status", q.Status != "", f.Status != ""}, {"workflow", q.WorkflowID != "", f.WorkflowID != ""},
		{"name", q.Name != "", f.Name != ""}, {"id ~ (q)", q.Q != "", f.Q != ""},
		{"started >= (started after)", !q.StartedAfter.IsZero(), !f.StartedAfter.IsZero()},
		{"started < (started before)", !q.StartedBefore.IsZero(), !f.StartedBefore.IsZero()},
	} {
		if c.a && c.b {
			return fmt.Errorf("%s is given both in the where filter and on its own; give it once", c.name)
		}
	}
	q.Status = cmp.Or(q.Status, f.Status)
	q.WorkflowID = cmp.Or(q.WorkflowID, f.WorkflowID)
	q.Name = cmp.Or(q.Name, f.Name)
	q.Q = cmp.Or(q.Q, f.Q)
	if q.StartedAfter.IsZero() {
		q.StartedAfter = f.StartedAfter
	}
	if q.StartedBefore.IsZero() {
		q.StartedBefore = f.StartedBefore
	}
	q.IDPrefix, q.Search = f.IDPrefix, f.Search
	if !q.StartedAfter.IsZero() && !q.StartedBefore.IsZero() && !q.StartedAfter.Before(q.StartedBefore) {
		return fmt.Errorf("the start times leave no run: started after must be earlier than started before")
	}
	return nil
}

// Matcher is Match for loops over many runs: it lower-cases q.Q once.
func (q ListQuery) Matcher() func(history.Run) bool {
	lowerQ := strings.ToLower(q.Q)
	return func(r history.Run) bool { return q.match(r, lowerQ) }
}
