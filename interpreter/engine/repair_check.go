package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wendflow/wend/history"
)

// CheckTasks compares the stored tasks with what the histories of the open runs need, for wend
// check: each open run is replayed with the spec it recorded, as Recover
// does, and every task its pending work needs must be stored under its id, for that run and of
// that kind. A run record whose name differs from its spec's is reported too. It only reads,
// so it runs beside an engine that drives the store: a run that committed between the reads is
// skipped, since tasks change only in commits that append to a run's history.
func CheckTasks(store history.Store) ([]string, error) {
	runs, err := store.Runs(history.RunFilter{Status: history.StatusRunning})
	if err != nil {
		return nil, err
	}
	var out []string
	type need struct {
		rec   history.Run
		tasks []history.Task
	}
	var needs []need
	for _, rec := range runs {
		evs, err := store.Events(rec.RunID, 0)
		if err != nil || len(history.Check(rec, evs)) > 0 {
			continue // the store's own check reports the history
		}
		st, err := history.DataOf[history.Started](evs[0])
		if err != nil {
			continue
		}
		lr, err := replayRun(st, evs, true)
		if err != nil {
			out = append(out, fmt.Sprintf("run %s: cannot be replayed to check its tasks: %v", rec.RunID, err))
			continue
		}
		lr.rec = rec
		if rec.Name != lr.w.Name {
			out = append(out, fmt.Sprintf("run %s: run record: name %q, its recorded spec says %q", rec.RunID, rec.Name, lr.w.Name))
		}
		needs = append(needs, need{rec, neededTasks(store, lr)})
	}
	tasks, err := store.Tasks()
	if d := (*history.DamagedTasksError)(nil); errors.As(err, &d) {
		err = nil // the store's check names them
	}
	if err != nil {
		return nil, err
	}
	stored := make(map[string]history.Task, len(tasks))
	for _, t := range tasks {
		stored[t.ID] = t
	}
	for _, n := range needs {
		var found []string
		for _, want := range n.tasks {
			got, ok := stored[want.ID]
			switch {
			case !ok:
				found = append(found, fmt.Sprintf("run %s: its history needs task %s, which the database lacks (wend repair rebuilds it)", n.rec.RunID, want.ID))
			case got.RunID != want.RunID || got.Kind != want.Kind:
				found = append(found, fmt.Sprintf("task %s: says run %s (%s), but the history of run %s needs it (%s); wend repair replaces it", want.ID, got.RunID, got.Kind, want.RunID, want.Kind))
			}
		}
		if len(found) == 0 {
			continue
		}
		if now, err := store.Run(n.rec.RunID); err != nil || now.LastSeq != n.rec.LastSeq {
			continue // it moved on while we read: what it needs has changed
		}
		out = append(out, found...)
	}
	slices.Sort(out)
	return out, nil
}

// ErrNoSpecSource is Replay's error for a history whose WorkflowStarted holds no spec text.
var ErrNoSpecSource = errors.New("WorkflowStarted holds no spec source to replay with")

// Replay replays a run's history through the interpreter with the spec text its
// WorkflowStarted recorded, as Recover does, and returns why it could not: a spec that no
// longer loads, or a history the spec's decisions do not reproduce (wend check --export).
func Replay(evs []history.Event) error {
	if len(evs) == 0 || evs[0].Type != history.WorkflowStarted {
		return errors.New("the history does not begin with WorkflowStarted")
	}
	st, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return err
	}
	if st.SpecSource == "" {
		return ErrNoSpecSource
	}
	_, err = replayRun(st, evs, true)
	return err
}
