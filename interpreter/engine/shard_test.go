package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

func itemsInput(n int) string {
	b, _ := json.Marshal(map[string]any{"items": make([]int, n)})
	return string(b)
}

// TestShardedForEachEngine: a for_each over 1,000 items with shard 100 completes through the
// engine, with every item's output in order; its items ran in 10 shard child runs started
// from the recorded spec text (the file changes after the start), and the parent's history
// holds two events a child, not the items'.
func TestShardedForEachEngine(t *testing.T) {
	h := newHarness(t)
	f := h.write("big.wend.yaml", head+"steps:\n  - id: loop\n    for_each: \"${{ input.items }}\"\n    shard: 100\n    concurrency: 10\n"+
		"    steps: [{activity: p.echo, with: \"${{ index }}\"}]\noutput: \"${{ steps.loop.output }}\"\n")
	h.start(f, "big", itemsInput(1000))
	if err := os.WriteFile(f, []byte("wend: v1\nname: changed\nsteps: [{fail: x}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.wait("big")
	var out []int
	if err := json.Unmarshal([]byte(h.output(r)), &out); err != nil || len(out) != 1000 {
		t.Fatalf("%s: output %.200s (%v)", r.Status, h.output(r), err)
	}
	for i, v := range out {
		if v != i {
			t.Fatalf("output[%d] = %d, want %d", i, v, i)
		}
	}
	if r.LastSeq != 1+2*10+1 {
		t.Errorf("parent history has %d events, want %d (2 a child)", r.LastSeq, 1+2*10+1)
	}
	for k := range 10 {
		id := fmt.Sprintf("big/%s/steps[0]#shard%d", r.RunID, k)
		kids, err := h.store.Runs(history.RunFilter{WorkflowID: id})
		if err != nil || len(kids) != 1 || kids[0].ParentRunID != r.RunID || kids[0].Status != history.StatusCompleted {
			t.Fatalf("child %s: %+v %v", id, kids, err)
		}
		if kids[0].LastSeq != 2+2*100 {
			t.Errorf("child %s has %d events, want %d", id, kids[0].LastSeq, 2+2*100)
		}
	}
	if n := h.acts.count("echo"); n != 1000 {
		t.Fatalf("%d calls, want 1000", n)
	}
}

// TestShardedForEachEngineChildFails: an item that fails fails its child run, and the child
// fails the step: the run fails with category child_workflow, and no child starts after it.
func TestShardedForEachEngineChildFails(t *testing.T) {
	h := newHarness(t)
	h.acts.fns["maybe"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if string(c.Input) == "250" {
			return nil, &history.Failure{Category: history.CategoryActivity, Type: "Bad", Message: "item 250 is bad", NonRetryable: true}
		}
		return c.Input, nil
	}
	f := h.write("w.wend.yaml", head+"steps:\n  - for_each: \"${{ input.items }}\"\n    shard: 100\n    concurrency: 5\n"+
		"    steps: [{activity: p.maybe, with: \"${{ index }}\", retry: {tries: 1}}]\n")
	h.start(f, "w", itemsInput(1000))
	r := h.wait("w")
	if r.Status != history.StatusFailed || !strings.Contains(h.output(r), "item 250 is bad") {
		t.Fatalf("%s: %s", r.Status, h.output(r))
	}
	evs, _ := h.store.Events(r.RunID, 0)
	c, _ := history.DataOf[history.Closed](evs[len(evs)-1])
	if c.Failure.Category != history.CategoryChildWorkflow {
		t.Fatalf("failure %+v", c.Failure)
	}
	for k, want := range map[int]int{2: 1, 3: 0} {
		kids, _ := h.store.Runs(history.RunFilter{WorkflowID: fmt.Sprintf("w/%s/steps[0]#shard%d", r.RunID, k)})
		if len(kids) != want {
			t.Fatalf("shard %d: %d runs, want %d (the third fails, none starts after it)", k, len(kids), want)
		}
	}
}

// TestShardedForEachEngineCancel: cancelling the parent cancels its open shard child.
func TestShardedForEachEngineCancel(t *testing.T) {
	h := newHarness(t)
	started := make(chan struct{}, 100)
	h.acts.fns["block"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	f := h.write("w.wend.yaml", head+"steps:\n  - for_each: \"${{ input.items }}\"\n    shard: 10\n"+
		"    steps: [{activity: p.block}]\n")
	parent := h.start(f, "w", itemsInput(30))
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the first item never started")
	}
	if err := h.e.Cancel(context.Background(), "w", "stop"); err != nil {
		t.Fatal(err)
	}
	if r := h.wait("w"); r.Status != history.StatusCancelled {
		t.Fatalf("parent %s", r.Status)
	}
	child := fmt.Sprintf("w/%s/steps[0]#shard0", parent.RunID)
	if r := h.wait(child); r.Status != history.StatusCancelled {
		t.Fatalf("child %s", r.Status)
	}
	kids, _ := h.store.Runs(history.RunFilter{WorkflowID: fmt.Sprintf("w/%s/steps[0]#shard1", parent.RunID)})
	if len(kids) != 0 {
		t.Fatalf("a second child started: %+v", kids)
	}
}

// TestShardedForEachEngineRecover: the process stops while a shard child's item is in
// flight; after Recover the child resumes from its own history and the parent goes on to
// the next child, each item's output still in its place.
func TestShardedForEachEngineRecover(t *testing.T) {
	h := newHarness(t)
	block := make(chan struct{})
	h.acts.fns["slow"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		if string(c.Input) == "15" {
			select {
			case <-block:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return c.Input, nil
	}
	f := h.write("w.wend.yaml", head+"steps:\n  - id: loop\n    for_each: \"${{ input.items }}\"\n    shard: 10\n"+
		"    steps: [{activity: p.slow, with: \"${{ index }}\"}]\noutput: \"${{ steps.loop.output }}\"\n")
	h.start(f, "w", itemsInput(30))
	for h.acts.count("slow") < 16 {
		time.Sleep(time.Millisecond)
	}
	h.e.Close() // item 15, in the second child, is in flight
	delete(h.acts.fns, "slow")
	h.open()
	if _, err := h.e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := h.wait("w")
	var out []int
	if err := json.Unmarshal([]byte(h.output(r)), &out); err != nil || len(out) != 30 {
		t.Fatalf("%s: output %s", r.Status, h.output(r))
	}
	for i, v := range out {
		if v != i {
			t.Fatalf("output[%d] = %d", i, v)
		}
	}
	if n := h.acts.count("slow"); n != 31 {
		t.Fatalf("%d calls, want 31 (item 15 twice)", n)
	}
}

// TestShardedForEachParentEvicted: the parent leaves memory while it waits for its shard
// child; the next child still starts from the parent's recorded text,
// and the parent, rebuilt from its history, collects every output in order.
func TestShardedForEachParentEvicted(t *testing.T) {
	h := newIdleHarness(t, Options{IdleAfter: time.Second})
	// The first item holds its child open until the waiting parent has left memory (h.wait
	// moves the virtual clock past IdleAfter).
	h.acts.fns["gate"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		for deadline := time.Now().Add(10 * time.Second); string(c.Input) == "0" && h.e.idle.evicted.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return c.Input, nil
	}
	f := h.write("w.wend.yaml", head+"steps:\n  - id: loop\n    for_each: \"${{ input.items }}\"\n    shard: 5\n    concurrency: 5\n"+
		"    steps: [{activity: p.gate, with: \"${{ index }}\"}]\noutput: \"${{ steps.loop.output }}\"\n")
	h.start(f, "w", itemsInput(20))
	r := h.wait("w")
	var out []int
	if err := json.Unmarshal([]byte(h.output(r)), &out); err != nil || len(out) != 20 {
		t.Fatalf("%s: output %s", r.Status, h.output(r))
	}
	for i, v := range out {
		if v != i {
			t.Fatalf("output[%d] = %d", i, v)
		}
	}
	if h.e.idle.evicted.Load() == 0 {
		t.Fatal("no run left memory; the case does not test eviction")
	}
}

// TestShardChildStartsWhileParentEvicted: a shard child's start reads the parent's recorded
// text without its state machine, which may have left memory (it did: a nil spec, before).
func TestShardChildStartsWhileParentEvicted(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	h.acts.fns["block"] = func(ctx context.Context, c history.ActivityCall) (json.RawMessage, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return c.Input, nil
	}
	defer close(release)
	src := head + "steps:\n  - for_each: \"${{ input.items }}\"\n    shard: 2\n    steps: [{activity: p.block}]\n"
	parent := h.start(h.write("w.wend.yaml", src), "w", itemsInput(4))
	for h.acts.count("block") == 0 {
		time.Sleep(time.Millisecond)
	}
	lr := h.e.live(parent.RunID)
	lr.mu.Lock()
	h.e.evict(lr)
	lr.mu.Unlock()
	cs := history.ChildSchedule{WorkflowID: "w/x/steps[0]#shard1", SpecFile: parent.SpecFile,
		Input: json.RawMessage(`{"items":[0,0]}`), Shard: &history.ShardRef{Path: "steps[0]", Offset: 2}}
	child, evs, err := func() (*liveRun, []history.Event, error) {
		h.e.mu.Lock() // as startChild holds it
		defer h.e.mu.Unlock()
		return h.e.childRun(parent, "", "steps[0]#shard1", cs)
	}()
	if err != nil {
		t.Fatal(err)
	}
	st, _ := history.DataOf[history.Started](evs[0])
	if st.SpecSource != src || st.Shard == nil || st.Shard.Offset != 2 || child.rec.ParentRunID != parent.RunID {
		t.Fatalf("child started %+v", st)
	}
}
