package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wendflow/wend/history"
)

// listPageSize is how many runs one page of the list shows.
const listPageSize = 50

// listView is the runs page.
type listView struct {
	uiPage
	Counts    []statusCount
	Total     int
	Status    string // filters as given
	Workflow  string
	Q         string
	Workflows []string // workflow names present, for the filter
	Statuses  []string
	Runs      []history.Run
	Shown     int // runs matching the filters
	Page      int
	Pages     int
	PrevURL   string
	NextURL   string
	LiveURL   string
	Version   string // changes whenever a run changes; the script compares it
}

type statusCount struct {
	Status string
	N      int
	URL    string
	Active bool
}

// uiList is GET /ui/runs: counts by status, filters (status, workflow name, text in the
// workflow or run id), newest first, paged; ?partial=live answers only the live part.
func (s *Server) uiList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := listView{uiPage: newUIPage(r, "Runs"), Status: q.Get("status"), Workflow: q.Get("workflow"),
		Q: strings.TrimSpace(q.Get("q")), Statuses: runStatuses}
	if err := CheckStatus(v.Status); err != nil {
		renderError(w, r, err)
		return
	}
	v.Page, _ = strconv.Atoi(q.Get("page"))
	v.Page = max(v.Page, 1)
	all, err := s.List(history.RunFilter{})
	if err != nil {
		renderError(w, r, err)
		return
	}
	v.fill(all)
	if fragmentOf(r) == "live" {
		renderPage(w, http.StatusOK, "runs", "live", v)
		return
	}
	renderPage(w, http.StatusOK, "runs", "", v)
}

func (v *listView) fill(all []history.Run) {
	counts := map[string]int{}
	names := map[string]bool{}
	var version uint64
	var match []history.Run
	for _, run := range all {
		counts[run.Status]++
		names[run.Name] = true
		version += run.LastSeq
		if (v.Status == "" || run.Status == v.Status) && (v.Workflow == "" || run.Name == v.Workflow) &&
			(v.Q == "" || strings.Contains(run.WorkflowID, v.Q) || strings.Contains(run.RunID, v.Q)) {
			match = append(match, run)
		}
	}
	v.Total = len(all)
	v.Version = fmt.Sprintf("%d-%d", len(all), version)
	for _, st := range append([]string{""}, runStatuses...) {
		n := counts[st]
		if st == "" {
			n = len(all)
		}
		v.Counts = append(v.Counts, statusCount{Status: st, N: n, URL: v.url(st, v.Workflow, v.Q, 1), Active: st == v.Status})
	}
	for n := range names {
		v.Workflows = append(v.Workflows, n)
	}
	slices.Sort(v.Workflows)
	v.Shown = len(match)
	v.Pages = max(1, (len(match)+listPageSize-1)/listPageSize)
	v.Page = min(v.Page, v.Pages)
	lo := (v.Page - 1) * listPageSize
	v.Runs = match[lo:min(lo+listPageSize, len(match))]
	if v.Page > 1 {
		v.PrevURL = v.url(v.Status, v.Workflow, v.Q, v.Page-1)
	}
	if v.Page < v.Pages {
		v.NextURL = v.url(v.Status, v.Workflow, v.Q, v.Page+1)
	}
	live, _ := url.Parse(v.url(v.Status, v.Workflow, v.Q, v.Page))
	lq := live.Query()
	lq.Set("partial", "live")
	live.RawQuery = lq.Encode()
	v.LiveURL = live.String()
}

// url builds a list URL; the template escapes it again for its attribute.
func (v *listView) url(status, workflow, q string, page int) string {
	p := url.Values{}
	if status != "" {
		p.Set("status", status)
	}
	if workflow != "" {
		p.Set("workflow", workflow)
	}
	if q != "" {
		p.Set("q", q)
	}
	if page > 1 {
		p.Set("page", strconv.Itoa(page))
	}
	if len(p) == 0 {
		return uiRunsPath
	}
	return uiRunsPath + "?" + p.Encode()
}
