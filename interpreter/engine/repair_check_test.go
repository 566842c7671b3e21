package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestCheckTasksAgainstHistory: wend check compares tasks with what the open runs'
// histories need. A task whose run id was flipped (a record written before checksums) left its
// run waiting for ever with check saying ok; now check names it, repair replaces it, and a
// lost task and a run record whose name its spec contradicts are reported too.
func TestCheckTasksAgainstHistory(t *testing.T) {
	h := newHarness(t)
	f := h.write("w.wend.yaml", head+"steps:\n  - delay: 1m\n  - activity: p.a\n")
	h.start(f, "flip", "null")
	h.start(f, "lost", "null")
	if ps, err := CheckTasks(h.store); err != nil || len(ps) != 0 {
		t.Fatalf("healthy store: %q %v", ps, err)
	}
	ctx := context.Background()
	runs, _ := h.store.Runs(history.RunFilter{})
	byWF := map[string]history.Run{}
	for _, r := range runs {
		byWF[r.WorkflowID] = r
	}
	tasks, _ := h.store.Tasks()
	var flipped, lost history.Task
	for _, tk := range tasks {
		if tk.RunID == byWF["flip"].RunID {
			flipped = tk
		} else {
			lost = tk
		}
	}
	flipped.RunID = "x" + flipped.RunID[1:]
	renamed := byWF["lost"]
	renamed.Name = "wrong"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.store.Commit(ctx, history.Commit{Runs: []history.RunUpdate{{Run: renamed}}, PutTasks: []history.Task{flipped}, DeleteTasks: []string{lost.ID}}))
	ps, err := CheckTasks(h.store)
	must(err)
	want := []string{
		"run " + renamed.RunID + ": its history needs task " + lost.ID + ", which the database lacks (wend repair rebuilds it)",
		"run " + renamed.RunID + `: run record: name "wrong", its recorded spec says "t"`,
		"task " + flipped.ID + ": says run " + flipped.RunID + " (timer), but the history of run " + byWF["flip"].RunID + " needs it (timer); wend repair replaces it",
	}
	if strings.Join(ps, "\n") != strings.Join(want, "\n") {
		t.Fatalf("check:\n%s\nwant:\n%s", strings.Join(ps, "\n"), strings.Join(want, "\n"))
	}
	h.e.sched.remove(flipped.ID)
	h.e.sched.remove(lost.ID)
	rep, err := h.e.Repair(ctx, "")
	must(err)
	if len(rep.Rebuilt) != 2 {
		t.Fatalf("repair rebuilt %q, want both tasks", rep.Rebuilt)
	}
	ps, err = CheckTasks(h.store)
	must(err)
	if len(ps) != 0 { // the repair's commit rewrote the renamed run's record from its replay
		t.Fatalf("after repair: %q", ps)
	}
}
