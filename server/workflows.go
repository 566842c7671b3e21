package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/spec"
)

// IsWorkflowFile says whether a file name is a workflow's: *.wend.yaml or *.wend.yml.
func IsWorkflowFile(name string) bool {
	return strings.HasSuffix(name, ".wend.yaml") || strings.HasSuffix(name, ".wend.yml")
}

// LoadWorkflows registers every workflow file below each of dirs by its name, sorted by
// name. Every file must load without errors (spec.Loader) and every name must be unique;
// the error lists every problem, naming the files (both, for a name given twice).
func LoadWorkflows(dirs ...string) ([]api.Workflow, error) {
	var problems []string
	byName := map[string]string{}
	seen := map[string]bool{} // a folder given twice, or nested in another, counts once
	l := &spec.Loader{}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("workflows %s: %w", dir, err)
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !IsWorkflowFile(d.Name()) || seen[path] {
				return nil
			}
			seen[path] = true
			w, ds, err := l.LoadFile(path)
			switch {
			case err != nil:
				problems = append(problems, err.Error())
			case ds.HasErrors():
				problems = append(problems, fmt.Sprintf("%s: the workflow is invalid:\n%s", path, ds.Error()))
			case w.Name == "":
				problems = append(problems, fmt.Sprintf("%s: the workflow has no name", path))
			case byName[w.Name] != "":
				problems = append(problems, fmt.Sprintf("workflow name %q is in two files: %s and %s", w.Name, byName[w.Name], path))
			default:
				byName[w.Name] = path
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("workflows %s: %w", dir, err)
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	ws := make([]api.Workflow, 0, len(byName))
	for name, file := range byName {
		ws = append(ws, api.Workflow{Name: name, File: file})
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].Name < ws[j].Name })
	return ws, nil
}

// SetWorkflows replaces the registered workflows (see LoadWorkflows). Safe to call while
// serving; the list is not watched for changes.
func (s *Server) SetWorkflows(ws []api.Workflow) {
	ws = append([]api.Workflow(nil), ws...)
	sort.Slice(ws, func(i, j int) bool { return ws[i].Name < ws[j].Name })
	s.workflows.Store(&ws)
}

// Workflows returns the registered workflows, sorted by name; never nil.
func (s *Server) Workflows() []api.Workflow {
	if p := s.workflows.Load(); p != nil {
		return append([]api.Workflow{}, (*p)...)
	}
	return []api.Workflow{}
}

// registered finds a registered workflow's file; unknown names are a 404 listing the
// registered ones.
func (s *Server) registered(name string) (string, error) {
	var ws []api.Workflow
	if p := s.workflows.Load(); p != nil {
		ws = *p // replaced whole, never changed in place
	}
	for _, w := range ws {
		if w.Name == name {
			return w.File, nil
		}
	}
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Name
	}
	if len(names) == 0 {
		return "", errorf(http.StatusNotFound, api.CodeNotFound,
			fmt.Sprintf("start: no registered workflow %q: none are registered (wend serve --workflows DIR)", name))
	}
	return "", errorf(http.StatusNotFound, api.CodeNotFound,
		fmt.Sprintf("start: no registered workflow %q; registered: %s", name, strings.Join(names, ", ")))
}

// fromRegistered fills a start request that names a registered workflow with its file and
// text, read now: the run records the text it started with even if the file changes later.
func (s *Server) fromRegistered(req engine.StartRequest) (engine.StartRequest, error) {
	if req.SpecFile != "" || req.Source != "" {
		return req, errorf(http.StatusBadRequest, api.CodeBadRequest,
			"start: give either workflow (a registered name) or spec_file and source, not both")
	}
	file, err := s.registered(req.Workflow)
	if err != nil {
		return req, err
	}
	src, err := spec.ReadWorkflowFile(file)
	if err != nil {
		return req, wrap(fmt.Errorf("start %s: read the registered file: %w", req.Workflow, err))
	}
	req.Workflow, req.SpecFile, req.Source = "", file, s.texts.share(file, src)
	return req, nil
}

// registeredTexts keeps the last text read of each registered file, so the runs started from
// an unchanged file share one string instead of a copy each (a server with thousands of
// waiting runs of a workflow holds its text once).
type registeredTexts struct {
	mu sync.Mutex
	m  map[string]string // file -> its text as last read
}

// maxRegisteredTexts bounds registeredTexts; past it the map starts afresh (files are few).
const maxRegisteredTexts = 1024

// share returns src as a string: the one kept for file when the text is unchanged.
func (t *registeredTexts) share(file string, src []byte) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kept, ok := t.m[file]; ok && kept == string(src) {
		return kept
	}
	if t.m == nil || len(t.m) >= maxRegisteredTexts {
		t.m = map[string]string{}
	}
	text := string(src)
	t.m[file] = text
	return text
}

// listWorkflows is GET /v1/workflows.
func (s *Server) listWorkflows(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, api.WorkflowList{Workflows: s.Workflows()})
}
