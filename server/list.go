package server

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"net/http"
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

// listParams are the query parameters GET /v1/runs accepts.
var listParams = []string{"status", "workflow_id", "name", "q", "started_after", "started_before", "limit", "cursor", "where"}

// ParseListQuery reads GET /v1/runs's parameters. An empty value is the same as none; an
// unknown or repeated parameter, a bad status, time, limit or cursor is a 400 *Error.
func ParseListQuery(v url.Values) (ListQuery, error) {
	for k, vs := range v {
		known := false
		for _, p := range listParams {
			known = known || k == p
		}
		if !known {
			return ListQuery{}, badList(fmt.Sprintf("unknown parameter %q (want %s)", k, strings.Join(listParams, ", ")))
		}
		if len(vs) > 1 {
			return ListQuery{}, badList(fmt.Sprintf("parameter %q given %d times", k, len(vs)))
		}
	}
	q := ListQuery{Status: v.Get("status"), WorkflowID: v.Get("workflow_id"), Name: v.Get("name"), Q: v.Get("q"), Cursor: v.Get("cursor")}
	if err := CheckStatus(q.Status); err != nil {
		return ListQuery{}, badList(err.Error())
	}
	if len(q.Q) > MaxListQuery {
		return ListQuery{}, badList(fmt.Sprintf("q is %d bytes long, more than %d", len(q.Q), MaxListQuery))
	}
	var err error
	if q.StartedAfter, err = parseListTime(v, "started_after"); err != nil {
		return ListQuery{}, err
	}
	if q.StartedBefore, err = parseListTime(v, "started_before"); err != nil {
		return ListQuery{}, err
	}
	if !q.StartedAfter.IsZero() && !q.StartedBefore.IsZero() && !q.StartedAfter.Before(q.StartedBefore) {
		return ListQuery{}, badList(fmt.Sprintf("started_after (%s) must be earlier than started_before (%s)",
			v.Get("started_after"), v.Get("started_before")))
	}
	if w := v.Get("where"); w != "" {
		if err := q.addWhere(w); err != nil {
			return ListQuery{}, err
		}
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > MaxListLimit {
			return ListQuery{}, badList(fmt.Sprintf("limit=%q must be a whole number from 1 to %d", l, MaxListLimit))
		}
		q.Limit = n
	}
	if q.Cursor != "" {
		if _, _, err := decodeCursor(q.Cursor); err != nil {
			return ListQuery{}, err
		}
	}
	return q, nil
}

func parseListTime(v url.Values, name string) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, badList(fmt.Sprintf("%s=%q is not an RFC 3339 time like 2024-05-01T12:00:00Z", name, s))
	}
	return t, nil
}

func badList(msg string) *Error {
	return errorf(http.StatusBadRequest, CodeBadRequest, "list runs: "+msg)
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

// ListPage returns one page of the runs matching q, newest first. The cursor is a position
// in that order (the last run's started_at and run id), not an offset: runs started after
// the first page was read sort before it, so they never shift a later page, and paging on
// neither repeats nor skips a run. (A run whose status changes between pages may leave or
// join a status filter, as it would in any listing.)
func (s *Server) ListPage(q ListQuery) (RunPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	var (
		afterT  time.Time
		afterID string
	)
	if q.Cursor != "" {
		var err error
		if afterT, afterID, err = decodeCursor(q.Cursor); err != nil {
			return RunPage{}, err
		}
	}
	if nr, ok := s.store.(newestReader); ok && s.cluster == nil && q.WorkflowID == "" && len(q.Search) == 0 {
		if page, ok, err := listNewest(nr, q, limit, afterT, afterID); ok || err != nil {
			return page, err
		}
	}
	runs, err := s.List(q.StoreFilter())
	if err != nil {
		return RunPage{}, err
	}
	lowerQ := strings.ToLower(q.Q)
	page := RunPage{Runs: []history.Run{}}
	for _, r := range runs {
		if q.Cursor != "" && !olderThan(r, afterT, afterID) {
			continue
		}
		if !q.match(r, lowerQ) {
			continue
		}
		if len(page.Runs) == limit {
			last := page.Runs[limit-1]
			page.NextCursor = encodeCursor(last.StartedAt, last.RunID)
			break
		}
		page.Runs = append(page.Runs, r)
	}
	return page, nil
}

// olderThan reports whether r sorts after the position (t, id) in newest-first order.
func olderThan(r history.Run, t time.Time, id string) bool {
	if c := r.StartedAt.Compare(t); c != 0 {
		return c < 0
	}
	return r.RunID < id
}

// cursorVersion prefixes a cursor's text, so its form can change without misreading old ones.
const cursorVersion = "c1"

// encodeCursor makes the opaque cursor for the position just after (t, id).
func encodeCursor(t time.Time, id string) string {
	raw := cursorVersion + "|" + t.UTC().Format(time.RFC3339Nano) + "|" + id
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(c string) (time.Time, string, error) {
	bad := badList(fmt.Sprintf("cursor %q is not one this server gave (pass next_cursor as it came)", c))
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", bad
	}
	parts := strings.SplitN(string(raw), "|", 3)
	if len(parts) != 3 || parts[0] != cursorVersion || parts[2] == "" {
		return time.Time{}, "", bad
	}
	t, err := time.Parse(time.RFC3339Nano, parts[1])
	if err != nil {
		return time.Time{}, "", bad
	}
	return t, parts[2], nil
}

// StoreFilter is the part of q the store filters by itself (history.RunFilter): what it reads
// through an index or from the run records; Match checks the rest.
func (q ListQuery) StoreFilter() history.RunFilter {
	return history.RunFilter{Status: q.Status, WorkflowID: q.WorkflowID, Search: q.Search}
}

// addWhere merges the filter text w (the where= parameter) into q.
func (q *ListQuery) addWhere(w string) error {
	f, err := ParseWhere(w)
	if err != nil {
		return badList("where: " + err.Error())
	}
	if err := q.MergeWhere(f); err != nil {
		return badList(err.Error())
	}
	return nil
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
