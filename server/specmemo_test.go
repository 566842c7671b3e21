package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// TestStartRemembersValidSpec: a second start of the same workflow text is not
// parsed and checked again by the server (the engine checks it anyway), while a changed text
// and a text whose run_workflow child may have changed are checked at every start.
func TestStartRemembersValidSpec(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.start("a", `{"who":"x"}`)
	if f.srv.specs.hits != 0 {
		t.Fatalf("first start answered from memory (%d hits)", f.srv.specs.hits)
	}
	f.start("b", `{"who":"y"}`)
	if f.srv.specs.hits != 1 {
		t.Fatalf("second start of the same text: %d memo hits, want 1", f.srv.specs.hits)
	}

	post := func(id, file, src string) (int, string) {
		body, _ := json.Marshal(engine.StartRequest{WorkflowID: id, SpecFile: file, Source: src})
		return f.do("POST", "/v1/runs", string(body), nil)
	}
	// The same file name with another, invalid text is refused.
	code, b := post("c", filepath.Join(f.dir, "approval.wend.yaml"), "wend: v1\nname: x\nsteps: [{nope: 1}]\n")
	wantError(t, code, b, http.StatusBadRequest, api.CodeBadWorkflow, "the workflow is invalid")

	// A parent whose child is valid starts; once the child's file turns invalid, the same
	// parent text is refused: it was not remembered.
	child := filepath.Join(f.dir, "child.wend.yaml")
	if err := os.WriteFile(child, []byte("wend: v1\nname: child\nsteps: [{delay: 1h}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(f.dir, "parent.wend.yaml")
	parentSrc := "wend: v1\nname: parent\nsteps: [{run_workflow: ./child.wend.yaml}]\n"
	if code, b := post("p1", parent, parentSrc); code != http.StatusCreated {
		t.Fatalf("parent with a valid child: %d %s", code, b)
	}
	if err := os.WriteFile(child, []byte("wend: v1\nname: child\nsteps: [{nope: 1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, b = post("p2", parent, parentSrc)
	wantError(t, code, b, http.StatusBadRequest, api.CodeBadWorkflow, "the workflow is invalid")
}
