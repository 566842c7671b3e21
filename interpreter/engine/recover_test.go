package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// damagingStore is a MemStore whose Tasks reports the records under the keys in damaged as a
// damaged store does: set aside, with a *history.DamagedTasksError. A key put again is sound.
type damagingStore struct {
	*history.MemStore
	mu      sync.Mutex
	damaged map[string]bool
}

func (d *damagingStore) Tasks() ([]history.Task, error) {
	ts, err := d.MemStore.Tasks()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var bad []history.DamagedTask
	for k := range d.damaged {
		bad = append(bad, history.DamagedTask{Key: k, Problem: "task " + k + ": checksum mismatch"})
	}
	ts = slices.DeleteFunc(ts, func(t history.Task) bool { return d.damaged[t.ID] })
	if len(bad) == 0 {
		return ts, nil
	}
	return ts, &history.DamagedTasksError{Damaged: bad}
}

func (d *damagingStore) Commit(ctx context.Context, c history.Commit) error {
	if err := d.MemStore.Commit(ctx, c); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range c.PutTasks {
		delete(d.damaged, t.ID)
	}
	for _, k := range c.DeleteTasks {
		delete(d.damaged, k)
	}
	return nil
}

// TestDamagedTaskSetAside: a damaged task record no longer stops the engine from
// resuming (serve, resume and repair exited 2 for the whole database): Recover logs it, counts
// it, rebuilds it from the run's history, deletes a damaged record no run needs (its key was
// hit), and every run goes on.
func TestDamagedTaskSetAside(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps:\n  - delay: 1m\n  - activity: p.a\n")
	h.start(f, "hit", "null")
	h.start(f, "other", "null")
	ts, _ := h.store.Tasks()
	if len(ts) != 2 {
		t.Fatalf("tasks %+v", ts)
	}
	h.e.Close()

	hit := ts[0].ID
	if !strings.HasPrefix(hit, ts[0].RunID) {
		t.Fatalf("task id %q", hit)
	}
	ds := &damagingStore{MemStore: h.store, damaged: map[string]bool{hit: true, "garbage-key": true}}
	var logs []string
	var mu sync.Mutex
	e := New(Options{Store: ds, Activities: h.acts, Clock: h.clock, Logf: func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, strings.TrimSpace(fmt.Sprintf(format, args...)))
		mu.Unlock()
	}})
	h.e = e
	t.Cleanup(func() { e.Close() })
	rep, err := e.Recover(context.Background())
	if err != nil {
		t.Fatalf("recover with a damaged task: %v", err)
	}
	if rep.Resumed != 2 || len(rep.Repair.Rebuilt) != 1 || !strings.HasSuffix(rep.Repair.Rebuilt[0], hit) {
		t.Fatalf("recover report %+v, want 2 runs resumed and task %s rebuilt", rep, hit)
	}
	if !slices.Equal(rep.Repair.Dropped, []string{"garbage-key"}) {
		t.Errorf("dropped %q, want the damaged record no run needs", rep.Repair.Dropped)
	}
	if e.DamagedTasks() != 2 {
		t.Errorf("DamagedTasks() = %d, want 2", e.DamagedTasks())
	}
	mu.Lock()
	said := strings.Join(logs, "\n")
	mu.Unlock()
	if !strings.Contains(said, "task "+hit+": checksum mismatch; set aside") {
		t.Errorf("log does not name the damaged task:\n%s", said)
	}
	if again, _ := ds.Tasks(); len(again) != 2 {
		t.Fatalf("tasks after recover: %+v", again)
	}
	h.clock.Advance(2 * time.Minute)
	for _, id := range []string{"hit", "other"} {
		if r := h.wait(id); r.Status != history.StatusCompleted {
			t.Errorf("run %s %s", id, r.Status)
		}
	}
}

// TestRecoverRebuildsLostTasks: a task lost while no engine ran (a timer's) is
// rebuilt when the next engine recovers, as serve's watchdog would a minute later; before,
// wend resume waited for ever for a timer it had no task for.
func TestRecoverRebuildsLostTasks(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps:\n  - delay: 1h\n  - activity: p.a\n")
	h.start(f, "lost", "null")
	h.e.Close()
	ts, _ := h.store.Tasks()
	runs, _ := h.store.Runs(history.RunFilter{WorkflowID: "lost"})
	if len(ts) != 1 || len(runs) != 1 {
		t.Fatalf("tasks %+v runs %+v", ts, runs)
	}
	if err := h.store.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: runs[0]}}, DeleteTasks: []string{ts[0].ID}}); err != nil {
		t.Fatal(err)
	}
	h.open()
	rep, err := h.e.Recover(context.Background())
	if err != nil || len(rep.Repair.Rebuilt) != 1 || !strings.HasSuffix(rep.Repair.Rebuilt[0], ts[0].ID) {
		t.Fatalf("recover: %+v %v, want the timer task rebuilt", rep, err)
	}
	h.clock.Advance(2 * time.Hour)
	if r := h.wait("lost"); r.Status != history.StatusCompleted {
		t.Fatalf("run %s", r.Status)
	}
}
