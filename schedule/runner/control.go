package runner

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/wendflow/wend/schedule"
)

// View is a schedule as list, show and GET /v1/schedules give it.
type View struct {
	Record
	Declared bool      `json:"declared"` // false: the serving process registers no file declaring it, so it does not fire
	Paused   bool      `json:"paused"`   // the effective pause: the operator's, else the declared one
	NextFire time.Time `json:"next_fire,omitzero"`
	// BufferedCount is how many fires wait in State.Buffered; List shows only the first
	// ListedBuffered of them, Show all (at most schedule.MaxBuffered).
	BufferedCount int `json:"buffered_count"`
}

// ListedBuffered is how many buffered fires a schedule in List carries: a buffer_all schedule
// holds up to schedule.MaxBuffered, and a list of schedules should not grow with them.
const ListedBuffered = 10

func (r *Runner) view(id string) View {
	rec := r.recs[id]
	d := r.defs[id]
	_, declared := r.entries[id]
	if r.opts.Engine == nil {
		declared = true // no serve here: the record says what the files declared when one last ran
	}
	v := View{Record: *rec, Declared: declared, Paused: rec.State.IsPaused(d), BufferedCount: len(rec.State.Buffered)}
	if declared && !v.Paused {
		st := rec.State
		_, v.NextFire = schedule.NextFire(d, &st)
	}
	return v
}

// List returns every stored schedule, by id.
// Each carries its first ListedBuffered buffered fires and their count.
func (r *Runner) List() []View {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.recs))
	for id := range r.recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]View, 0, len(ids))
	for _, id := range ids {
		v := r.view(id)
		if len(v.State.Buffered) > ListedBuffered {
			v.State.Buffered = v.State.Buffered[:ListedBuffered:ListedBuffered]
		}
		out = append(out, v)
	}
	return out
}

// Show returns one schedule.
func (r *Runner) Show(id string) (View, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.recs[id]; !ok {
		return View{}, r.notFound(id)
	}
	return r.view(id), nil
}

func (r *Runner) notFound(id string) error {
	return fmt.Errorf("schedule %q: %w (wend schedule list shows them)", id, ErrNotFound)
}

// change applies fn to a schedule's state and commits it, then wakes the runner.
func (r *Runner) change(id string, fn func(rec *Record, d schedule.Def) error) (View, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.recs[id]
	if !ok {
		return View{}, r.notFound(id)
	}
	before, _ := json.Marshal(rec)
	if err := fn(rec, r.defs[id]); err != nil {
		var back Record
		_ = json.Unmarshal(before, &back)
		*rec = back
		return View{}, err
	}
	if err := r.save(rec); err != nil {
		return View{}, err
	}
	r.poke()
	return r.view(id), nil
}

// Pause stops a schedule firing until Resume; fires due meanwhile are let pass.
func (r *Runner) Pause(id, note string) (View, error) {
	return r.change(id, func(rec *Record, _ schedule.Def) error {
		t := true
		rec.State.Paused, rec.State.Note = &t, note
		return nil
	})
}

// Resume starts a paused schedule again, from now: the paused period's fires do not run.
func (r *Runner) Resume(id, note string) (View, error) {
	return r.change(id, func(rec *Record, _ schedule.Def) error {
		f := false
		rec.State.Paused, rec.State.Note = &f, note
		if now := r.opts.Now(); rec.State.Last.Before(now) {
			rec.State.Last = now
		}
		return nil
	})
}

// Trigger fires a schedule now under its overlap policy, or overlap when given. The fire is
// recorded before this returns; serve starts its run.
func (r *Runner) Trigger(id string, overlap schedule.Overlap) (schedule.Fire, error) {
	var f schedule.Fire
	_, err := r.change(id, func(rec *Record, d schedule.Def) error {
		schedule.Tick(d, &rec.State, rec.State.Last, r.isOpen) // prune closed runs first
		f = schedule.Trigger(d, &rec.State, r.opts.Now(), overlap)
		return nil
	})
	return f, err
}

// Backfill fires every calendar time in [from, to) under overlap (or the schedule's policy).
// The fires are recorded before this returns; serve starts their runs.
func (r *Runner) Backfill(id string, from, to time.Time, overlap schedule.Overlap) (int, error) {
	var n int
	_, err := r.change(id, func(rec *Record, d schedule.Def) error {
		schedule.Tick(d, &rec.State, rec.State.Last, r.isOpen)
		var err error
		n, err = schedule.Backfill(d, &rec.State, from, to, r.opts.Now(), overlap)
		return err
	})
	return n, err
}

// Delete forgets a schedule and its state; it stops firing. A schedule a registered file still
// declares comes back, firing from then on, when serve next starts: remove it from the file to
// delete it for good. Runs it started are untouched.
func (r *Runner) Delete(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.recs[id]; !ok {
		return r.notFound(id)
	}
	if err := r.opts.Store.PutScheduleStates(nil, []string{id}); err != nil {
		return err
	}
	delete(r.recs, id)
	delete(r.defs, id)
	delete(r.entries, id)
	return nil
}
