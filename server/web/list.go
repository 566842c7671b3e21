package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// listPageSize is how many runs one page of the list shows.
const listPageSize = 50

// listView is the runs page.
type listView struct {
	uiPage
	Counts   []statusCount
	Total    int
	Status   string // filters as given
	Workflow string
	Q        string
	// Where is the filter box's text (server.ParseWhere: wend list --where's filters, search
	// fields included); a filter that does not parse is the page's error and filters nothing.
	Where string
	// Compensated keeps only runs whose compensations ran (compensated); keep is that test.
	Compensated bool
	keep        func(history.Run) bool
	Workflows   []string // workflow names present, for the filter
	Statuses    []string
	Runs        []history.Run
	Shown       int // runs matching the filters
	Page        int
	Pages       int
	PrevURL     string
	NextURL     string
	LiveURL     string
	Version     string // changes whenever a run changes; the script compares it
	// Registered are the workflows the start form offers (wend serve --workflows).
	Registered []server.Workflow
	StartName  string // the start form's values, kept when a start failed
	StartInput string
	StartID    string
	// Batchable says the list offers to act on the runs ticked (a batch: batches.go);
	// BatchActions are what it offers.
	Batchable    bool
	BatchActions []string
}

type statusCount struct {
	Status string
	N      int
	URL    string
	Active bool
}

// uiList is GET /ui/runs: counts by status, filters (status, workflow name, text in the
// workflow or run id), newest first, paged; ?partial=live answers only the live part.
func (u *UI) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := listView{uiPage: newUIPage(r, "Runs"), Status: q.Get("status"), Workflow: q.Get("workflow"),
		Q: strings.TrimSpace(q.Get("q")), Statuses: server.RunStatuses, Compensated: q.Get("compensated") != "",
		Where: strings.TrimSpace(q.Get("where"))}
	if v.Compensated {
		v.keep = u.compensated
	}
	if err := server.CheckStatus(v.Status); err != nil {
		renderError(w, r, err)
		return
	}
	v.Page, _ = strconv.Atoi(q.Get("page"))
	v.Page = max(v.Page, 1)
	all, err := u.s.List(history.RunFilter{})
	if err != nil {
		renderError(w, r, err)
		return
	}
	v.fill(all)
	v.Registered = u.s.Workflows()
	if bs := u.s.Batches(); bs != nil && v.Auth.Act {
		v.Batchable = true
		for _, act := range batchActions {
			if bs.Runs(act) {
				v.BatchActions = append(v.BatchActions, act)
			}
		}
	}
	if fragmentOf(r) == "live" {
		renderPage(w, http.StatusOK, "runs", "live", v)
		return
	}
	renderPage(w, http.StatusOK, "runs", "", v)
}

// uiStart is POST /ui/runs: the start form. Over TCP the guard has checked the session and
// its CSRF value, as for the run buttons. Success redirects to the run's page; failure shows
// the list again with the reason and the form as filled.
func (u *UI) start(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, server.MaxFormBody)
	if err := r.ParseForm(); err != nil {
		renderError(w, r, server.NewError(server.CodeBadRequest, "unreadable form: "+err.Error()))
		return
	}
	name, input := strings.TrimSpace(r.PostForm.Get("workflow")), strings.TrimSpace(r.PostForm.Get("input"))
	id := strings.TrimSpace(r.PostForm.Get("id"))
	var err error
	var st server.Started
	if name == "" {
		err = server.NewError(server.CodeBadRequest, "start: choose a workflow")
	} else {
		req := engine.StartRequest{Workflow: name, WorkflowID: id}
		if input != "" {
			req.Input = json.RawMessage(input)
		}
		st, err = u.s.Start(r.Context(), req)
	}
	if err != nil {
		e := server.ErrorOf(err)
		v := listView{uiPage: newUIPage(r, "Runs"), Statuses: server.RunStatuses, Page: 1,
			StartName: name, StartInput: input, StartID: id}
		v.Error = e.Message
		all, lerr := u.s.List(history.RunFilter{})
		if lerr != nil {
			renderError(w, r, err)
			return
		}
		v.fill(all)
		v.Registered = u.s.Workflows()
		renderPage(w, e.Status, "runs", "", v)
		return
	}
	done := "start"
	if !st.Started {
		done = "exists"
	}
	http.Redirect(w, r, uiRunsPath+"/"+url.PathEscape(st.Run.RunID)+"?done="+done, http.StatusSeeOther)
}

func (v *listView) fill(all []history.Run) {
	counts := map[string]int{}
	names := map[string]bool{}
	var version uint64
	var match []history.Run
	filter := v.filter() // the API's filter: same search rules
	for _, run := range all {
		counts[run.Status]++
		names[run.Name] = true
		version += run.LastSeq
		if filter.Match(run) && (v.keep == nil || v.keep(run)) {
			match = append(match, run)
		}
	}
	if len(match) == 0 && len(filter.Search) > 0 && v.Error == "" {
		if err := server.SearchFieldError(filter.Search, server.RunSearchFields(all)); err != nil {
			v.Error = "filter: " + err.Error()
		}
	}
	v.Total = len(all)
	v.Version = fmt.Sprintf("%d-%d", len(all), version)
	for _, st := range append([]string{""}, server.RunStatuses...) {
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

// filter is the list's filters as the API's query: the selects, the id box and the filter box.
func (v *listView) filter() server.ListQuery {
	q := server.ListQuery{Status: v.Status, Name: v.Workflow, Q: v.Q}
	if v.Where == "" {
		return q
	}
	w, err := server.ParseWhere(v.Where)
	if err == nil {
		err = q.MergeWhere(w)
	}
	if err != nil {
		v.Error = "filter: " + err.Error()
		return server.ListQuery{Status: v.Status, Name: v.Workflow, Q: v.Q}
	}
	return q
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
	if v.Where != "" {
		p.Set("where", v.Where)
	}
	if v.Compensated {
		p.Set("compensated", "1")
	}
	if page > 1 {
		p.Set("page", strconv.Itoa(page))
	}
	if len(p) == 0 {
		return uiRunsPath
	}
	return uiRunsPath + "?" + p.Encode()
}
