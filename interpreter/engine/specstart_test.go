package engine

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestStartParsesATextOnce: starts of one workflow text share one parsed spec, but a text
// with run_workflow steps is loaded at every start, so a child file broken since the last
// start is caught; and an invalid text is never remembered.
func TestStartParsesATextOnce(t *testing.T) {
	h := newHarness(t)
	plain := h.write("plain.wend.yaml", head+"steps: [{delay: 1s}]\n")
	child := h.write("child.wend.yaml", head+"steps: [{delay: 1s}]\n")
	parent := h.write("parent.wend.yaml", head+"steps:\n  - {id: k, run_workflow: ./child.wend.yaml}\n")
	bad := h.write("bad.wend.yaml", head+"steps: [{delay: soon}]\n")
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var c specCache
	load := func(p string) (any, bool) {
		src := read(p)
		w, _, ds := c.forStart(p, src, sha([]byte(src)))
		return w, ds.HasErrors()
	}

	w1, _ := load(plain)
	w2, failed := load(plain)
	if failed || w1 != w2 {
		t.Fatalf("a second start of the same text parsed it again (or failed: %v)", failed)
	}

	p1, _ := load(parent)
	if p2, failed := load(parent); failed || p1 == p2 {
		t.Fatalf("a text with run_workflow was taken from memory (failed: %v), want it loaded again", failed)
	}
	if err := os.WriteFile(child, []byte(head+"steps: [{delay: soon}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, failed := load(parent); !failed {
		t.Fatalf("a start after its child file was broken passed, want the child's error")
	}

	for range 2 {
		if _, failed := load(bad); !failed {
			t.Fatalf("an invalid text passed")
		}
	}
	if c.cached(bad, sha([]byte(read(bad)))) != nil {
		t.Fatalf("an invalid text is remembered")
	}
}

// TestStartAfterChildBrokenIsRefused: through Engine.Start, a parent started once is refused
// once its child file no longer loads.
func TestStartAfterChildBrokenIsRefused(t *testing.T) {
	h := newHarness(t)
	child := h.write("child.wend.yaml", head+"steps: [{delay: 1s}]\n")
	parent := h.write("parent.wend.yaml", head+"steps:\n  - {id: k, run_workflow: ./child.wend.yaml}\n")
	src, err := os.ReadFile(parent)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := h.e.Start(ctx, StartRequest{WorkflowID: "a", SpecFile: parent, Source: string(src)}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(child, []byte(head+"steps: [{delay: soon}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = h.e.Start(ctx, StartRequest{WorkflowID: "b", SpecFile: parent, Source: string(src)})
	if err == nil || !strings.Contains(err.Error(), "child.wend.yaml") {
		t.Fatalf("start after the child broke: %v, want the child named", err)
	}
}
