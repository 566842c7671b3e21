package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
)

// runView is the run page. Its facts come from the run's view (runview.Fold): the sections of
// the history export, the same document `wend show` renders and the download gives, plus what
// the export does not hold: the step tree, the waits and the live state.
type runView struct {
	uiPage
	Run      history.Run
	Doc      *export.Document
	DocErr   string // the view could not be built; the raw events are still shown
	Steps    []runview.Step
	Waits    []runview.Wait
	State    json.RawMessage // the run's public state now (runview's Live)
	StateErr string
	RetryOf  string // the failed run this run retries
	Events   []history.Event
	URL      string // this run's page
	LiveURL  string
	Version  string
	Actions  []runAction // those valid for the run's status (validActions)
	// SignalNames are the names the signal form offers (signalNames); Declared: the
	// workflow declares its signals, so the form offers only those.
	SignalNames []string
	Declared    bool
	// SignalForms answer the declared signals the run waits for now (signalForms).
	SignalForms []signalForm
	DoneLabel   string
	// Items are the activities, a for_each's collapsed (groupActivities); EventPage the
	// events shown (pageEvents).
	Items     []activityItem
	EventPage eventPage
	params    url.Values // the page's query (pageParams)
	// StepRows are the step table's page of Steps, Gantt the timeline's (the same rows over
	// time), RowPage which page they are; Span is the time the timeline covers.
	StepRows []runview.Step
	Gantt    []ganttRow
	RowPage  pager
	Span     time.Duration
	// CardPage is the activities section's page of its entries (Items).
	CardPage pager
	view     *runview.View // nil when DocErr says why
	// Graph is the workflow drawn with the run's states (runGraph); Detail the step its
	// ?step= names, with its tries (detailOf).
	Graph  template.HTML
	Detail *stepDetail
	// GraphKey identifies the drawing (graphKey); GraphKept: a poll's page has it already, so
	// the live part leaves it out and the page keeps its own.
	GraphKey  string
	GraphKept bool
	// WorkflowURL is the page of the registered workflow the run is of ("" when none is).
	WorkflowURL string
	// Move offers to move the open run to its workflow's registered file, another version
	// (offerMove); nil when there is none, and on the live fragment, which polls.
	Move *moveOffer

	// Queue says what a queued run waits for; Unstarted marks a run with no history (queued,
	// or closed while queued).
	Queue     string
	Unstarted bool
}

// StepName names a step path for a person (runview.StepName); pages keep the path in a title.
func (v *runView) StepName(path string) string {
	if v.view == nil {
		return runview.StepName(path, nil)
	}
	return v.view.Name(path)
}

// TimerName names a timer for a person (runview.TimerName); pages keep the id in a title.
func (v *runView) TimerName(id string) string { return runview.TimerName(id, v.StepName) }

// ParentStepName names the parent's step that started this run. The parent's spec is another
// file, so the step is named by its place.
func (v *runView) ParentStepName() string { return runview.StepName(v.Run.ParentStep, nil) }

// action is one operator button (besides the signal form).
type runAction struct {
	Name   string // the POST path element
	Label  string
	Reason bool   // asks for a reason
	Help   string // what it does, in a title attribute
}

var runActions = []runAction{
	{Name: "cancel", Label: "Cancel", Reason: true, Help: "cancel the run: compensations and on_cancel run"},
	{Name: "terminate", Label: "Terminate", Reason: true, Help: "stop the run at once: no compensation, no on_cancel"},
	{Name: "retry", Label: "Retry", Help: "resume a failed run from its failed activity, in a new run"},
	{Name: "repair", Label: "Repair", Help: "recreate tasks the history needs but the store lacks"},
}

// doneText are the confirmations ?done= may name; free text never comes from the URL.
var doneText = map[string]string{
	"signal": "Signal sent.", "cancel": "Cancel requested.", "terminate": "Terminate requested.",
	"retry": "Retry started: this is the new run.", "repair": "Repair done.",
	"migrate": "Moved: the run goes on under the registered file.",
	"start":   "Run started.", "exists": "A run with that id exists already: this is it.",
}

// uiRun is GET /ui/runs/{id}: a workflow id shows its newest run, a run id that run.
func (u *UI) run(w http.ResponseWriter, r *http.Request) {
	if fragmentOf(r) == "live" && u.liveUnchanged(w, r) {
		return
	}
	v, err := u.runView(r, r.PathValue("id"))
	if err != nil {
		renderError(w, r, err)
		return
	}
	v.Flash = doneText[r.URL.Query().Get("done")]
	if fragmentOf(r) == "live" {
		w.Header().Set("ETag", etagOf(v.Version))
		w.Header().Set("Cache-Control", "no-cache")
		renderPage(w, http.StatusOK, "run", "live", v)
		return
	}
	renderPage(w, http.StatusOK, "run", "", v)
}

func (u *UI) runView(r *http.Request, id string) (*runView, error) {
	rec, err := u.s.Resolve(id)
	if err != nil {
		return nil, err
	}
	v := u.runHead(r, rec)
	if rec.NeverStarted() {
		return u.unstartedView(v, rec)
	}
	f, older := u.runs.get(rec)
	if f == nil {
		run, fresh, err := u.foldOf(rec, older)
		if err != nil {
			return nil, err
		}
		if run.NeverStarted() {
			return u.unstartedView(u.runHead(r, run), run)
		}
		if run.LastSeq != rec.LastSeq || run.Status != rec.Status {
			v = u.runHead(r, run) // a commit landed between the reads
		}
		f = fresh
		u.runs.put(run.RunID, f)
	}
	v.Events = f.events
	newest := v.Run.RunID
	if n, nerr := u.s.Resolve(v.Run.WorkflowID); nerr == nil {
		newest = n.RunID
	}
	if f.err != nil {
		v.DocErr = f.err.Error()
		v.Actions = validActions(v.Run, nil, newest)
		return v, nil
	}
	v.Doc = f.doc
	v.Actions = validActions(v.Run, f.view, newest)
	if fragmentOf(r) != "live" {
		v.Move = u.offerMove(r.Context(), v.Run)
	}
	page := func(key string) int { n, _ := strconv.Atoi(v.params.Get(key)); return n }
	v.Items, v.CardPage = f.groups.page(f.doc.Activities, v.params.Get("expand"), page("apage"), page("cpage"))
	v.EventPage = pageEvents(f.events, page("epage"), v.params.Get("events") == "compact")
	v.SignalNames, v.Declared, v.SignalForms = f.names, f.declared, f.forms
	v.view, v.Steps, v.Waits, v.RetryOf = f.view, f.steps, f.waits, f.view.RetryOf
	v.State, v.StateErr = f.state, f.stateErr
	v.RowPage = pageOf(len(f.steps), rowPageSize, page("tpage"))
	v.StepRows = f.steps[v.RowPage.lo:v.RowPage.hi]
	if len(f.gantt) > 0 {
		v.Span = f.span
		v.Gantt = f.gantt[min(v.RowPage.lo, len(f.gantt)):min(v.RowPage.hi, len(f.gantt))]
	}
	marks := stepMarks(v.Steps, v.Waits, f.loops, func(path string) string { return v.With("step", path) + "#step-detail" })
	v.GraphKey = graphKey(marks)
	if r.Header.Get(graphKeyHeader) == v.GraphKey && fragmentOf(r) == "live" {
		v.GraphKept = true // the page shows this very drawing already: it keeps it
	} else {
		v.Graph = f.graph(v.GraphKey, marks)
	}
	v.Detail = v.detailOf(v.params.Get("step"), page("spage"))
	return v, nil
}

// foldOf reads and folds the run rec names: the events since the version older holds,
// folded into a copy of it, else the whole history. It returns the record read with the events.
func (u *UI) foldOf(rec history.Run, older *foldedRun) (history.Run, *foldedRun, error) {
	if older != nil {
		p, err := u.s.Events(rec.RunID, older.events[len(older.events)-1].Seq)
		if err != nil {
			return history.Run{}, nil, err
		}
		if f := extendRun(older, p.Run, p.Events); f != nil {
			return p.Run, f, nil
		}
	}
	p, err := u.s.Events(rec.RunID, 0)
	if err != nil || p.Run.NeverStarted() {
		return p.Run, nil, err
	}
	return p.Run, foldRun(p.Run, p.Events), nil
}

// runHead is the part of a run's page its record alone gives.
func (u *UI) runHead(r *http.Request, run history.Run) *runView {
	v := &runView{uiPage: newUIPage(r, "Run "+run.WorkflowID), Run: run}
	v.URL = uiRunsPath + "/" + url.PathEscape(run.RunID)
	v.params = r.URL.Query()
	v.LiveURL = v.liveURL()
	v.Version = runVersion(run)
	for _, w := range u.s.Workflows() {
		if w.Name == run.Name {
			v.WorkflowURL = workflowFile{Workflow: w}.URL()
		}
	}
	return v
}

// export is GET /ui/runs/{id}/export: the history export GET /v1/runs/{id}/export gives, as a
// file download.
func (u *UI) export(w http.ResponseWriter, r *http.Request) {
	doc, err := u.s.Export(r.PathValue("id"))
	if err != nil {
		server.WriteError(w, err)
		return
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		server.WriteError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// The run id is hex, but the header must stay safe whatever a store holds.
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "wend-"+safeName(doc.Workflow.RunID)+".json"))
	_, _ = w.Write(append(b, '\n'))
}

func safeName(s string) string {
	out := []byte(s)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			out[i] = '_'
		}
	}
	return string(out)
}

// unstartedView is the page of a run with no history: what it waits for while queued.
func (u *UI) unstartedView(v *runView, run history.Run) (*runView, error) {
	v.Unstarted = true
	newest := run.RunID
	if n, err := u.s.Resolve(run.WorkflowID); err == nil {
		newest = n.RunID
	}
	v.Actions = validActions(run, nil, newest)
	q, ok, err := u.s.Queue(run)
	if err != nil {
		return nil, err
	}
	if ok {
		v.Queue = q.String()
	}
	return v, nil
}
