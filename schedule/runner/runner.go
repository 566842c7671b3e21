// Package runner is the durable part of schedules: it keeps each schedule's state in the
// store, records every fire there before its run starts, and starts runs by a workflow id
// that names the fire, so a crash at any point neither loses nor repeats a fire
// (docs/reliability.md, Schedules). The decisions are package schedule's.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/wendflow/wend/failpoint"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/schedule"
)

// Store keeps schedule records: boltstore.Store implements it.
type Store interface {
	ScheduleStates() (map[string][]byte, error)
	PutScheduleStates(put map[string][]byte, del []string) error
}

// Engine starts and stops runs; *engine.Engine implements it. Start must be idempotent by
// workflow id (docs/reliability.md G8).
type Engine interface {
	Start(ctx context.Context, req engine.StartRequest) (history.Run, bool, error)
	Cancel(ctx context.Context, workflowID, reason string) error
	Terminate(ctx context.Context, workflowID, reason string) error
	Err() error
}

// Options configure a Runner.
type Options struct {
	Store   Store
	Runs    history.Store // to tell whether a schedule's runs are still open
	Engine  Engine        // nil: state changes only (pause, resume, delete; fires wait for serve)
	Entries []Entry       // the schedules declared in the registered workflow files
	Now     func() time.Time
	Logf    func(format string, args ...any)
	// Observe, when set, hears of every run a fire started and its lag behind the fire time.
	Observe func(scheduleID string, lag time.Duration)
}

// Runner owns the schedules of one database. Its methods are safe for concurrent use.
type Runner struct {
	opts    Options
	mu      sync.Mutex
	entries map[string]Entry
	recs    map[string]*Record
	defs    map[string]schedule.Def
	kick    chan struct{}
}

// ErrNotFound is wrapped by the error for an unknown schedule id.
var ErrNotFound = errors.New("no such schedule")

// New loads the stored schedules and adds the declared ones not yet stored (they fire from
// now on). A declared schedule's definition replaces the stored one; its state is kept.
func New(opts Options) (*Runner, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	r := &Runner{opts: opts, entries: map[string]Entry{}, recs: map[string]*Record{}, defs: map[string]schedule.Def{},
		kick: make(chan struct{}, 1)}
	stored, err := opts.Store.ScheduleStates()
	if err != nil {
		return nil, fmt.Errorf("read schedules: %w", err)
	}
	for id, b := range stored {
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("read schedule %s: %w", id, err)
		}
		r.recs[id] = &rec
	}
	put := map[string][]byte{}
	now := opts.Now()
	for _, e := range opts.Entries {
		if _, dup := r.entries[e.Schedule.ID]; dup {
			return nil, fmt.Errorf("schedule id %q is declared in %s and %s; schedule ids must be unique", e.Schedule.ID, r.entries[e.Schedule.ID].File, e.File)
		}
		r.entries[e.Schedule.ID] = e
		st := schedule.Init(now)
		if old, ok := r.recs[e.Schedule.ID]; ok {
			st = old.State
		}
		rec := recordOf(e, st)
		r.recs[rec.ID] = &rec
		if put[rec.ID], err = json.Marshal(rec); err != nil {
			return nil, err
		}
	}
	for id, rec := range r.recs {
		d, err := rec.def()
		if err != nil {
			return nil, err
		}
		r.defs[id] = d
	}
	if len(put) > 0 {
		if err := opts.Store.PutScheduleStates(put, nil); err != nil {
			return nil, fmt.Errorf("record schedules: %w", err)
		}
	}
	return r, nil
}

// Run fires schedules until ctx ends: it redoes what a crash interrupted, then ticks when the
// next fire is due, at least every second, and whenever a request (trigger, backfill,
// resume) kicks it.
func (r *Runner) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		var wait time.Duration
		if err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.opts.Logf("wend: schedules: %v", err)
			wait = time.Second // not sooner: the error may well repeat
		} else {
			wait = max(r.untilNextDue(time.Second), 10*time.Millisecond)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
	}
}

// untilNextDue is how long until the earliest fire of an active schedule is due, at most
// limit: waking at the fire's time keeps the lag small; the limit lets runs that closed
// release buffered fires soon.
func (r *Runner) untilNextDue(limit time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	wait := limit
	for id := range r.entries {
		rec, d := r.recs[id], r.defs[id]
		if rec == nil || rec.State.IsPaused(d) {
			continue
		}
		if _, due := schedule.NextFire(d, &rec.State); !due.IsZero() {
			wait = min(wait, max(due.Sub(now), 0))
		}
	}
	return wait
}

func (r *Runner) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Tick does, for every declared schedule, what is due by now: first the intents a crash may
// have left (stop, then start: both idempotent), then the calendar (schedule.Tick), whose
// decisions are committed before any run starts. Runs start without the runner's lock held,
// so list, show and /metrics answer during a long backfill.
func (r *Runner) Tick(ctx context.Context) error {
	if r.opts.Engine == nil {
		return errors.New("no engine: schedules fire only in wend serve")
	}
	r.mu.Lock()
	ids := make([]string, 0, len(r.entries))
	for id := range r.entries {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	sort.Strings(ids)
	var errs []error
	for _, id := range ids {
		if err := r.tickOne(ctx, id); err != nil {
			errs = append(errs, err)
			if r.opts.Engine.Err() != nil || ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// tickOne acts on a schedule's recorded intents, then decides what is due, until nothing
// is. Once ctx ends it decides nothing new, but what it recorded it still acts on.
func (r *Runner) tickOne(ctx context.Context, id string) error {
	for {
		r.mu.Lock()
		rec, declared := r.recs[id], r.entries[id].Schedule != nil
		if rec == nil || !declared { // deleted meanwhile
			r.mu.Unlock()
			return nil
		}
		stops, starts := slices.Clone(rec.State.Stopping), slices.Clone(rec.State.Starting)
		entry := r.entries[id]
		r.mu.Unlock()
		if err := r.act(ctx, id, entry, stops, starts); err != nil {
			return err
		}
		r.mu.Lock()
		if rec = r.recs[id]; rec == nil {
			r.mu.Unlock()
			return nil
		}
		if err := ctx.Err(); err != nil { // stopping: decide no new fire
			r.mu.Unlock()
			return err
		}
		changed, more := schedule.Tick(r.defs[id], &rec.State, r.opts.Now(), r.isOpen)
		var err error
		if changed {
			err = r.save(rec)
		}
		pending := len(rec.State.Starting) > 0 || len(rec.State.Stopping) > 0
		r.mu.Unlock()
		if err != nil {
			return err
		}
		if !pending && !more {
			return nil
		}
		// Fires just recorded are acted on even if a stop came meanwhile: starts are quick,
		// and a clean stop then leaves none for the next serve.
	}
}

// act performs a schedule's recorded intents: stops first (terminate_other must end the old
// run before the new one starts), then starts, then commits that they are done. Every one is
// safe to redo: a start finds the run its workflow id names, a stop of a closed run is a no-op.
func (r *Runner) act(ctx context.Context, id string, e Entry, stops []schedule.Stop, starts []schedule.Fire) error {
	if len(stops) == 0 && len(starts) == 0 {
		return nil
	}
	failpoint.Hit("schedule-recorded") // the fires are recorded, their runs not yet started
	eng := r.opts.Engine
	stopped := map[string]bool{}
	for _, s := range stops {
		reason := fmt.Sprintf("schedule %s: overlap %s for %s", id, e.Schedule.Overlap, s.For)
		var err error
		if s.Terminate {
			err = eng.Terminate(ctx, s.WorkflowID, reason)
		} else {
			err = eng.Cancel(ctx, s.WorkflowID, reason)
		}
		if err != nil && stopping(ctx, eng, err) {
			return err
		}
		stopped[s.WorkflowID] = true // done, or closed meanwhile, or already cancelling
	}
	started := map[string]bool{}
	var failed error
	for _, f := range starts {
		// A recorded fire is started even when the runner is stopping (a clean stop leaves
		// none unstarted), so ctx's end must not cut its input's validation short.
		run, created, err := eng.Start(context.WithoutCancel(ctx), engine.StartRequest{WorkflowID: f.WorkflowID, SpecFile: e.File, Source: string(e.Source), Input: e.Schedule.Input})
		if err != nil {
			if stopping(ctx, eng, err) {
				failed = err
				break
			}
			r.opts.Logf("wend: schedule %s: fire %s not started: %v", id, f.WorkflowID, err)
		} else if created {
			failpoint.Hit("schedule-started") // the run is committed, the intent not yet cleared
			r.opts.Logf("wend: schedule %s: started %s (run %s)", id, f.WorkflowID, run.RunID)
			if r.opts.Observe != nil {
				r.opts.Observe(id, run.StartedAt.Sub(f.At))
			}
		}
		started[f.WorkflowID] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.recs[id]
	if rec == nil {
		return failed // deleted meanwhile: nothing to record
	}
	rec.State.Stopping = slices.DeleteFunc(rec.State.Stopping, func(s schedule.Stop) bool { return stopped[s.WorkflowID] })
	rec.State.Starting = slices.DeleteFunc(rec.State.Starting, func(f schedule.Fire) bool { return started[f.WorkflowID] })
	if err := r.save(rec); err != nil {
		return err
	}
	return failed
}

// stopping says whether an intent failed because the engine or the runner is stopping (then
// the rest waits for the next serve) rather than for the run's own reason (logged, dropped).
func stopping(ctx context.Context, eng Engine, err error) bool {
	return eng.Err() != nil || (ctx.Err() != nil && errors.Is(err, ctx.Err()))
}

// isOpen says whether a schedule's run is still open (its newest run of that workflow id).
func (r *Runner) isOpen(workflowID string) bool {
	runs, err := r.opts.Runs.Runs(history.RunFilter{WorkflowID: workflowID})
	if err != nil {
		return true // unknown: keep counting it open rather than overlap it
	}
	return len(runs) > 0 && runs[0].Open()
}

func (r *Runner) save(rec *Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return r.opts.Store.PutScheduleStates(map[string][]byte{rec.ID: b}, nil)
}
