package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// listPageSize is how many runs one page of the list shows; listReadsMax bounds the API
// pages one list page reads when the compensated filter drops runs.
const (
	listPageSize = 50
	listReadsMax = 8
)

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
	// Cursor is where this page starts (api.ListQuery's cursor; "": the newest runs).
	// Page only numbers it for the reader: paging is by cursor, never by offset.
	Cursor    string
	Page      int
	NewestURL string // the first page, when this is not it
	NextURL   string // the older runs, when there are more
	LiveURL   string
	Version   string // changes whenever a run changes; the script compares it
	// Registered are the workflows the start form offers (wend serve --workflows).
	Registered []api.Workflow
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
	v.Cursor = q.Get("cursor")
	v.Page, _ = strconv.Atoi(q.Get("page"))
	if v.Page = max(v.Page, 1); v.Cursor == "" {
		v.Page = 1
	}
	if err := v.load(u); err != nil {
		renderError(w, r, err)
		return
	}
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
		renderError(w, r, api.NewError(api.CodeBadRequest, "unreadable form: "+err.Error()))
		return
	}
	if r.PostForm.Get("form") == "schema" { // from a workflow's page (workflows.go)
		u.startForm(w, r)
		return
	}
	name, input := strings.TrimSpace(r.PostForm.Get("workflow")), strings.TrimSpace(r.PostForm.Get("input"))
	id := strings.TrimSpace(r.PostForm.Get("id"))
	var err error
	var st api.Started
	if name == "" {
		err = api.NewError(api.CodeBadRequest, "start: choose a workflow")
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
		if lerr := v.load(u); lerr != nil {
			renderError(w, r, lerr)
			return
		}
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

// load reads the counts (server.Tally: the store's counts, kept at commit) and one page of
// the runs matching the filters through server.ListPage, the bounded cursor paging of
// GET /v1/runs: a page load or live poll never reads every run. The compensated filter, which
// the API has not, keeps what it passes of up to listReadsMax API pages; the next link goes
// on after the last run read.
func (v *listView) load(u *UI) error {
	t, err := u.s.Tally()
	if err != nil {
		return err
	}
	v.Total = t.Total
	v.Workflows = t.Names
	var ns []int
	for _, st := range append([]string{""}, server.RunStatuses...) {
		n := t.ByStatus[st]
		if st == "" {
			n = t.Total
		}
		ns = append(ns, n)
		v.Counts = append(v.Counts, statusCount{Status: st, N: n, URL: v.url(st, v.Workflow, v.Q, "", 1), Active: st == v.Status})
	}
	lq := v.filter() // the API's filter: same search rules
	lq.Limit, lq.Cursor = listPageSize, v.Cursor
	next := ""
	for reads := 0; reads < listReadsMax; reads++ {
		p, err := u.s.ListPage(lq)
		if err != nil {
			if msg, ok := strings.CutPrefix(server.ErrorOf(err).Message, "list runs: where: "); ok && v.Error == "" {
				v.Error = "filter: " + msg // a search field no run has
				break
			}
			return err
		}
		next = p.NextCursor
		for i, r := range p.Runs {
			if v.keep != nil && !v.keep(r) {
				continue
			}
			v.Runs = append(v.Runs, r)
			if len(v.Runs) == listPageSize && (i < len(p.Runs)-1 || next != "") {
				next = server.CursorAfter(r)
				break
			}
		}
		if next == "" || len(v.Runs) == listPageSize {
			break
		}
		lq.Cursor = next
	}
	var seq uint64
	for _, r := range v.Runs {
		seq += r.LastSeq
	}
	v.Version = fmt.Sprintf("%d-%v-%d-%d", t.Changes, ns, len(v.Runs), seq)
	if v.Cursor != "" {
		v.NewestURL = v.url(v.Status, v.Workflow, v.Q, "", 1)
	}
	if next != "" {
		v.NextURL = v.url(v.Status, v.Workflow, v.Q, next, v.Page+1)
	}
	live, _ := url.Parse(v.url(v.Status, v.Workflow, v.Q, v.Cursor, v.Page))
	lq2 := live.Query()
	lq2.Set("partial", "live")
	live.RawQuery = lq2.Encode()
	v.LiveURL = live.String()
	return nil
}

// filter is the list's filters as the API's query: the selects, the id box and the filter box.
func (v *listView) filter() api.ListQuery {
	q := api.ListQuery{Status: v.Status, Name: v.Workflow, Q: v.Q}
	if v.Where == "" {
		return q
	}
	w, err := server.ParseWhere(v.Where)
	if err == nil {
		err = q.MergeWhere(w)
	}
	if err != nil {
		v.Error = "filter: " + err.Error()
		return api.ListQuery{Status: v.Status, Name: v.Workflow, Q: v.Q}
	}
	return q
}

// url builds a list URL; the template escapes it again for its attribute.
func (v *listView) url(status, workflow, q, cursor string, page int) string {
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
	if cursor != "" {
		p.Set("cursor", cursor)
	}
	if page > 1 {
		p.Set("page", strconv.Itoa(page))
	}
	if len(p) == 0 {
		return uiRunsPath
	}
	return uiRunsPath + "?" + p.Encode()
}
