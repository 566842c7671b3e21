package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// listParams are the query parameters GET /v1/runs accepts.
var listParams = []string{"status", "workflow_id", "name", "q", "started_after", "started_before", "limit", "cursor", "where"}

// ParseListQuery reads GET /v1/runs's parameters. An empty value is the same as none; an
// unknown or repeated parameter, a bad status, time, limit or cursor is a 400 *Error.
func ParseListQuery(v url.Values) (api.ListQuery, error) {
	for k, vs := range v {
		known := false
		for _, p := range listParams {
			known = known || k == p
		}
		if !known {
			return api.ListQuery{}, badList(fmt.Sprintf("unknown parameter %q (want %s)", k, strings.Join(listParams, ", ")))
		}
		if len(vs) > 1 {
			return api.ListQuery{}, badList(fmt.Sprintf("parameter %q given %d times", k, len(vs)))
		}
	}
	q := api.ListQuery{Status: v.Get("status"), WorkflowID: v.Get("workflow_id"), Name: v.Get("name"), Q: v.Get("q"), Cursor: v.Get("cursor")}
	if err := CheckStatus(q.Status); err != nil {
		return api.ListQuery{}, badList(err.Error())
	}
	if len(q.Q) > api.MaxListQuery {
		return api.ListQuery{}, badList(fmt.Sprintf("q is %d bytes long, more than %d", len(q.Q), api.MaxListQuery))
	}
	var err error
	if q.StartedAfter, err = parseListTime(v, "started_after"); err != nil {
		return api.ListQuery{}, err
	}
	if q.StartedBefore, err = parseListTime(v, "started_before"); err != nil {
		return api.ListQuery{}, err
	}
	if !q.StartedAfter.IsZero() && !q.StartedBefore.IsZero() && !q.StartedAfter.Before(q.StartedBefore) {
		return api.ListQuery{}, badList(fmt.Sprintf("started_after (%s) must be earlier than started_before (%s)",
			v.Get("started_after"), v.Get("started_before")))
	}
	if w := v.Get("where"); w != "" {
		if err := addWhere(&q, w); err != nil {
			return api.ListQuery{}, err
		}
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > api.MaxListLimit {
			return api.ListQuery{}, badList(fmt.Sprintf("limit=%q must be a whole number from 1 to %d", l, api.MaxListLimit))
		}
		q.Limit = n
	}
	if q.Cursor != "" {
		if _, _, err := decodeCursor(q.Cursor); err != nil {
			return api.ListQuery{}, err
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

func badList(msg string) *api.Error {
	return errorf(http.StatusBadRequest, api.CodeBadRequest, "list runs: "+msg)
}

// ListPage returns one page of the runs matching q, newest first. The cursor is a position
// in that order (the last run's started_at and run id), not an offset: runs started after
// the first page was read sort before it, so they never shift a later page, and paging on
// neither repeats nor skips a run. (A run whose status changes between pages may leave or
// join a status filter, as it would in any listing.)
func (s *Server) ListPage(q api.ListQuery) (api.RunPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = api.DefaultListLimit
	}
	limit = min(limit, api.MaxListLimit)
	var (
		afterT  time.Time
		afterID string
	)
	if q.Cursor != "" {
		var err error
		if afterT, afterID, err = decodeCursor(q.Cursor); err != nil {
			return api.RunPage{}, err
		}
	}
	// An empty page of a search clause may be a typo's: checkSearchFields says (as List does).
	checked := func(page api.RunPage, err error) (api.RunPage, error) {
		if err == nil && len(page.Runs) == 0 {
			if err := s.checkSearchFields(q.Search); err != nil {
				return api.RunPage{}, err
			}
		}
		return page, err
	}
	if sr, ok := s.store.(searchReader); ok && s.cluster == nil && q.WorkflowID == "" && len(q.Search) > 0 {
		if page, ok, err := listSearch(sr, q, limit, afterT, afterID); ok || err != nil {
			return checked(page, err)
		}
	}
	if nr, ok := s.store.(newestReader); ok && s.cluster == nil && q.WorkflowID == "" {
		if page, ok, err := listNewest(nr, q, limit, afterT, afterID); ok || err != nil {
			return checked(page, err)
		}
	}
	runs, err := s.List(q.StoreFilter())
	if err != nil {
		return api.RunPage{}, err
	}
	match := q.Matcher()
	page := api.RunPage{Runs: []history.Run{}}
	for _, r := range runs {
		if q.Cursor != "" && !olderThan(r, afterT, afterID) {
			continue
		}
		if !match(r) {
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

// addWhere merges the filter text w (the where= parameter) into q.
func addWhere(q *api.ListQuery, w string) error {
	f, err := ParseWhere(w)
	if err != nil {
		return badList("where: " + err.Error())
	}
	if err := q.MergeWhere(f); err != nil {
		return badList(err.Error())
	}
	return nil
}
