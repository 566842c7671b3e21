package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/spec/graph"
)

// The workflows pages show what `wend serve --workflows` registered: each file with its
// version (the sha256 of its text, the spec_sha256 its runs record), its graph, its
// schedules, its runs, and a form from its `input` schema that starts a run.

const uiWorkflowsPath = "/ui/workflows"

func init() {
	pages["workflows"] = parsePage("workflows.html")
	pages["workflow"] = parsePage("workflow.html")
}

func (u *UI) workflowRoutes(m *server.Router) {
	m.HandleFunc("GET "+uiWorkflowsPath, server.AccessRead, u.workflows)
	m.HandleFunc("GET "+uiWorkflowsPath+"/{name}", server.AccessRead, u.workflow)
	m.HandleFunc("GET "+uiWorkflowsPath+"/{name}/graph.svg", server.AccessRead, u.workflowSVG)
}

// workflowFile is one registered file as read now.
type workflowFile struct {
	api.Workflow
	Version string // the file's sha256, hex
	Err     string // it no longer reads or loads
	spec    *spec.Workflow
}

// Short is the version as the pages show it.
func (f workflowFile) Short() string { return f.Version[:min(12, len(f.Version))] }

// URL is the workflow's page.
func (f workflowFile) URL() string { return uiWorkflowsPath + "/" + url.PathEscape(f.Name) }

// readWorkflow reads a registered file and loads it; a file that changed into one that does
// not load is reported, not served.
func readWorkflow(w api.Workflow) workflowFile {
	f := workflowFile{Workflow: w}
	data, err := os.ReadFile(w.File)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	sum := sha256.Sum256(data)
	f.Version = hex.EncodeToString(sum[:])
	sw, ds := (&spec.Loader{SkipChildren: true}).Load(w.File, data)
	if ds.HasErrors() || sw == nil {
		f.Err = "the file no longer loads: " + ds.Error()
		return f
	}
	f.spec = sw
	return f
}

// registeredFile finds the registered workflow name names.
func (u *UI) registeredFile(name string) (workflowFile, error) {
	for _, w := range u.s.Workflows() {
		if w.Name == name {
			return readWorkflow(w), nil
		}
	}
	return workflowFile{}, api.NewError(api.CodeNotFound, "no registered workflow "+name+" (wend serve --workflows DIR registers the files in DIR)")
}

type workflowsView struct {
	uiPage
	Workflows []workflowFile
}

func (u *UI) workflows(w http.ResponseWriter, r *http.Request) {
	v := workflowsView{uiPage: newUIPage(r, "Workflows")}
	for _, wf := range u.s.Workflows() {
		v.Workflows = append(v.Workflows, readWorkflow(wf))
	}
	renderPage(w, http.StatusOK, "workflows", "", v)
}

// workflowView is one registered workflow's page.
type workflowView struct {
	uiPage
	File        workflowFile
	Description string
	Graph       template.HTML
	Start       schemaForm
	StartID     string
	Schedules   []string
}

func (u *UI) workflow(w http.ResponseWriter, r *http.Request) {
	v, err := u.workflowView(r, r.PathValue("name"))
	if err != nil {
		renderError(w, r, err)
		return
	}
	renderPage(w, http.StatusOK, "workflow", "", v)
}

func (u *UI) workflowView(r *http.Request, name string) (*workflowView, error) {
	f, err := u.registeredFile(name)
	if err != nil {
		return nil, err
	}
	v := &workflowView{uiPage: newUIPage(r, "Workflow "+name), File: f}
	if f.spec == nil {
		v.Start = schemaForm{JSON: true}
		return v, nil
	}
	v.Description = f.spec.Description
	v.Graph = graphSVG(f.spec, nil)
	v.Start = buildForm(f.spec.Input)
	for _, s := range f.spec.Schedules {
		v.Schedules = append(v.Schedules, s.ID)
	}
	return v, nil
}

// workflowSVG is the workflow's drawing as a standalone SVG file (wend graph --format svg).
func (u *UI) workflowSVG(w http.ResponseWriter, r *http.Request) {
	f, err := u.registeredFile(r.PathValue("name"))
	if err == nil && f.spec == nil {
		err = api.NewError(api.CodeBadRequest, f.Err)
	}
	if err != nil {
		server.WriteError(w, err)
		return
	}
	var b bytes.Buffer
	if err := graph.SVG(&b, graph.Build(f.spec)); err != nil {
		server.WriteError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b.Bytes())
}

// startForm is POST /ui/runs from a workflow's page: the form built from its input schema,
// read back into the run's input (schemaForm.value), which Start checks against the schema
// again. A refusal shows the workflow's page with the reason and the values kept.
func (u *UI) startForm(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostForm.Get("workflow"))
	id := strings.TrimSpace(r.PostForm.Get("id"))
	v, err := u.workflowView(r, name)
	if err != nil {
		renderError(w, r, err)
		return
	}
	var input json.RawMessage
	input, err = v.Start.value(r.PostForm)
	var st api.Started
	if err == nil {
		st, err = u.s.Start(r.Context(), engine.StartRequest{Workflow: name, WorkflowID: id, Input: input})
	}
	if err != nil {
		e := server.ErrorOf(err)
		v.Error, v.StartID = e.Message, id
		v.Start.fill(r.PostForm)
		renderPage(w, e.Status, "workflow", "", v)
		return
	}
	done := "start"
	if !st.Started {
		done = "exists"
	}
	http.Redirect(w, r, uiRunsPath+"/"+url.PathEscape(st.Run.RunID)+"?done="+done, http.StatusSeeOther)
}
