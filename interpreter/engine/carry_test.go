package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
)

// A sequential step's next try runs on the goroutine whose try just reported (carrier,
// activity.go). These tests hold what that must not change: the try is called only once the
// commit that schedules it is answered (its dispatch mark is durable first),
// and a carried try is redelivered after a stop like any other (its cancel:
// TestCancelStopsInFlight).

// TestNextTryWaitsForItsScheduleCommit: the commit of a's outcome, which schedules b and marks
// it dispatched, is held at the store's gate; b must not be called while it is held, and when
// it is called its task must be in the store, marked.
func TestNextTryWaitsForItsScheduleCommit(t *testing.T) {
	store := newGateStore()
	acts := &fakeActs{fns: map[string]func(context.Context, history.ActivityCall) (json.RawMessage, error){}}
	calledB := make(chan bool, 1) // whether b's task was stored and marked when b was called
	acts.fns["a"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		store.arm() // a's outcome commit, and every later one, waits at the gate
		return json.RawMessage(`1`), nil
	}
	acts.fns["b"] = func(_ context.Context, c history.ActivityCall) (json.RawMessage, error) {
		task, ok, err := storedTask(store.MemStore, interpreter.TaskID(c.ActivityExecutionID, c.Attempt))
		calledB <- err == nil && ok && task.Dispatched
		return json.RawMessage(`2`), nil
	}
	e := New(Options{Store: store, Activities: acts, Clock: NewFakeClock(t0), Logf: t.Logf})
	t.Cleanup(func() { e.Close() })
	t.Cleanup(store.release)
	src := head + "steps: [{id: a, activity: p.a}, {id: b, activity: p.b}]\n"
	f := filepath.Join(t.TempDir(), "w.wend.yaml")
	if _, _, err := e.Start(context.Background(), StartRequest{WorkflowID: "w", SpecFile: f, Source: src, Input: json.RawMessage("null")}); err != nil {
		t.Fatal(err)
	}
	held := store.await(t, "a's outcome")
	if !schedules(held, "b") {
		t.Fatalf("the commit at the gate does not schedule b: %+v", held)
	}
	// A correct engine never calls b here, however long the commit is held; a broken one would
	// do so at once. The pause only gives a broken one the chance: nothing is timed.
	select {
	case <-calledB:
		t.Fatal("b was called while the commit that schedules it was still being written")
	case <-time.After(50 * time.Millisecond):
	}
	store.release()
	if marked := <-calledB; !marked {
		t.Fatal("b was called before its task, marked dispatched, was in the store")
	}
	rec, err := e.WaitClosed(context.Background(), "w")
	if err != nil || rec.Status != history.StatusCompleted {
		t.Fatalf("run %s, %v", rec.Status, err)
	}
}

// TestCarriedTryIsRedeliveredAfterAStop: the engine stops while b, a carried try, is in its
// call; Close returns (the carried try is counted in its wait and cancelled), and the next
// engine records b interrupted and redelivers it as attempt 2.
func TestCarriedTryIsRedeliveredAfterAStop(t *testing.T) {
	h := newHarness(t)
	started := blockFirst(h, "slow")
	f := h.write("w.wend.yaml", head+"steps: [{id: a, activity: p.quick}, {id: b, activity: p.slow, retry: {tries: 1}}]\n")
	h.start(f, "w", "null")
	first := <-started
	if task, ok := h.task(interpreter.TaskID(first.ActivityExecutionID, 1)); !ok || !task.Dispatched {
		t.Fatalf("b's task is not marked dispatched while its call runs: %+v %v", task, ok)
	}
	h.e.Close()
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || rep.Interrupted != 1 {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	if r := h.wait("w"); r.Status != history.StatusCompleted {
		t.Fatalf("run %s", r.Status)
	}
}

// TestCarriedTriesKeepMaxActivities: with one slot, a for_each's tries (one carried by each
// report, the rest on goroutines of their own) never run two at once.
func TestCarriedTriesKeepMaxActivities(t *testing.T) {
	h := newHarness(t)
	h.e.Close()
	h.slots = 1
	h.open()
	var running, most int
	h.acts.fns["x"] = func(context.Context, history.ActivityCall) (json.RawMessage, error) {
		h.acts.mu.Lock()
		running++
		most = max(most, running)
		h.acts.mu.Unlock()
		time.Sleep(time.Millisecond) // a second call let in would overlap this one
		h.acts.mu.Lock()
		running--
		h.acts.mu.Unlock()
		return json.RawMessage(`1`), nil
	}
	f := h.write("w.wend.yaml", head+"steps: [{id: a, activity: p.x}, {id: e, for_each: '${{ [1, 2, 3, 4, 5, 6] }}', steps: [{id: x, activity: p.x}, {id: y, activity: p.x}]}]\n")
	h.start(f, "w", "null")
	if r := h.wait("w"); r.Status != history.StatusCompleted {
		t.Fatalf("run %s", r.Status)
	}
	if n := h.acts.count("x"); n != 13 {
		t.Fatalf("%d calls, want 13", n)
	}
	if most != 1 {
		t.Fatalf("%d calls at once with MaxActivities 1", most)
	}
}

func storedTask(s *history.MemStore, id string) (history.Task, bool, error) {
	ts, err := s.Tasks()
	if err != nil {
		return history.Task{}, false, err
	}
	for _, t := range ts {
		if t.ID == id {
			return t, true, nil
		}
	}
	return history.Task{}, false, nil
}

// schedules reports whether c schedules a call of activity.
func schedules(c history.Commit, activity string) bool {
	for _, ru := range c.Runs {
		for _, ev := range ru.Events {
			if ev.Type != history.ActivityScheduled {
				continue
			}
			if s, err := history.DataOf[history.ActivitySchedule](ev); err == nil && s.Activity == activity {
				return true
			}
		}
	}
	return false
}
