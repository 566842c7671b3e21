package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const delaySpec = "wend: v1\nname: later\nsteps: [{delay: 1h}]\n"

func TestLoadWorkflows(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "approval.wend.yaml"), waitSpec)
	writeFile(t, filepath.Join(dir, "b", "deep", "later.wend.yml"), delaySpec)
	writeFile(t, filepath.Join(dir, "notes.yaml"), "not: a workflow\n")
	ws, err := LoadWorkflows(dir, filepath.Join(dir, "a")) // a folder reached twice counts once
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Workflow{{Name: "approval", File: filepath.Join(dir, "a", "approval.wend.yaml")}, {Name: "later", File: filepath.Join(dir, "b", "deep", "later.wend.yml")}}
	if len(ws) != 2 || ws[0] != want[0] || ws[1] != want[1] {
		t.Fatalf("workflows %+v, want %+v", ws, want)
	}

	// Two files with one name: both are named.
	writeFile(t, filepath.Join(dir, "c", "again.wend.yaml"), delaySpec)
	_, err = LoadWorkflows(dir)
	if err == nil || !strings.Contains(err.Error(), `workflow name "later" is in two files: `) ||
		!strings.Contains(err.Error(), filepath.Join(dir, "b", "deep", "later.wend.yml")) ||
		!strings.Contains(err.Error(), filepath.Join(dir, "c", "again.wend.yaml")) {
		t.Fatalf("duplicate: %v", err)
	}

	// An invalid file is named with its diagnostics.
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "bad.wend.yaml"), "wend: v1\nname: bad\nsteps: [{delay: 0s}]\n")
	if _, err := LoadWorkflows(bad); err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "bad.wend.yaml")+": the workflow is invalid") {
		t.Fatalf("invalid: %v", err)
	}
	if _, err := LoadWorkflows(filepath.Join(bad, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing folder: %v", err)
	}
}

func TestStartRegistered(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	var empty api.WorkflowList
	if code, b := f.do("GET", "/v1/workflows", "", &empty); code != 200 || empty.Workflows == nil || len(empty.Workflows) != 0 {
		t.Fatalf("no workflows: %d %s", code, b)
	}
	code, b := f.do("POST", "/v1/runs", `{"workflow":"approval"}`, nil)
	wantError(t, code, b, 404, api.CodeNotFound, `no registered workflow "approval": none are registered`)

	file := filepath.Join(f.dir, "approval.wend.yaml")
	writeFile(t, file, waitSpec)
	writeFile(t, filepath.Join(f.dir, "later.wend.yaml"), delaySpec)
	ws, err := LoadWorkflows(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetWorkflows(ws)
	var list api.WorkflowList
	if code, b := f.do("GET", "/v1/workflows", "", &list); code != 200 || len(list.Workflows) != 2 ||
		list.Workflows[0] != (api.Workflow{Name: "approval", File: file}) || list.Workflows[1].Name != "later" {
		t.Fatalf("workflows: %d %s", code, b)
	}

	// Started by name: the file's text at the start is what the run records, not a later edit.
	var st api.Started
	if code, b := f.do("POST", "/v1/runs", `{"workflow":"approval","id":"w1","input":{"who":"ann"}}`, &st); code != 201 ||
		!st.Started || st.Run.WorkflowID != "w1" || st.Run.Name != "approval" {
		t.Fatalf("start by name: %d %s", code, b)
	}
	writeFile(t, file, strings.Replace(waitSpec, "approve", "okay", -1))
	d := f.waitFor("w1", waitingForSignal)
	if d.Events[0].Type != history.WorkflowStarted || !strings.Contains(string(d.Events[0].Data), "wait_for_signal: approve") {
		t.Fatalf("recorded spec: %s", d.Events[0].Data)
	}

	// A start after the edit records the edited text.
	if code, b := f.do("POST", "/v1/runs", `{"workflow":"approval","id":"w2"}`, nil); code != 201 {
		t.Fatalf("start after an edit: %d %s", code, b)
	}
	if d := f.waitFor("w2", waitingForSignal); !strings.Contains(string(d.Events[0].Data), "wait_for_signal: okay") {
		t.Fatalf("recorded spec after an edit: %s", d.Events[0].Data)
	}

	// A duplicate id with the same input returns the existing run; with other input it is
	// refused.
	var again api.Started
	if code, b := f.do("POST", "/v1/runs", `{"workflow":"approval","id":"w1","input":{"who":"ann"}}`, &again); code != 200 || again.Started || again.Run.RunID != st.Run.RunID {
		t.Fatalf("duplicate id: %d %s", code, b)
	}
	code, b = f.do("POST", "/v1/runs", `{"workflow":"later","id":"w1"}`, nil)
	wantError(t, code, b, 409, api.CodeIDTaken, `workflow id "w1" is taken by run `+st.Run.RunID+" (running), which started with other input")

	code, b = f.do("POST", "/v1/runs", `{"workflow":"nope"}`, nil)
	wantError(t, code, b, 404, api.CodeNotFound, `no registered workflow "nope"; registered: approval, later`)
	code, b = f.do("POST", "/v1/runs", `{"workflow":"later","spec_file":"x.wend.yaml","source":"x"}`, nil)
	wantError(t, code, b, 400, api.CodeBadRequest, "not both")
	code, b = f.do("POST", "/v1/runs", `{"workflow":"later","input":{`, nil)
	wantError(t, code, b, 400, api.CodeBadRequest, "bad request body")

	// The file went away after registration.
	if err := os.Remove(filepath.Join(f.dir, "later.wend.yaml")); err != nil {
		t.Fatal(err)
	}
	code, b = f.do("POST", "/v1/runs", `{"workflow":"later"}`, nil)
	wantError(t, code, b, 500, api.CodeInternal, "read the registered file")
}

// Starts from an unchanged registered file share one copy of its text; an edited file's text
// is read again, so the next run records the edit.
func TestRegisteredTextsShare(t *testing.T) {
	var texts registeredTexts
	a := texts.share("a.wend.yaml", []byte("wend: v1\nname: a\n"))
	b := texts.share("a.wend.yaml", []byte("wend: v1\nname: a\n"))
	if a != "wend: v1\nname: a\n" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatalf("an unchanged text: %q and %q at %p and %p, want one shared string", a, b, unsafe.StringData(a), unsafe.StringData(b))
	}
	if c := texts.share("a.wend.yaml", []byte("wend: v1\nname: a2\n")); c != "wend: v1\nname: a2\n" {
		t.Fatalf("an edited text: %q", c)
	}
	if d := texts.share("b.wend.yaml", []byte("wend: v1\nname: a2\n")); d != "wend: v1\nname: a2\n" {
		t.Fatalf("another file: %q", d)
	}
}
