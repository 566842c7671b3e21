package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
)

// retention is how long wend serve keeps closed runs: the retention: of the workflow file
// --workflows registers under the run's name (the file as it is now), else the retention: of
// the spec text the run started with, else the --retention default; 0 keeps them.
type retention struct {
	byName map[string]time.Duration
	def    time.Duration
	// bySpec caches the retention of each spec text runs started with, by its sha256, read
	// from the first run of it met (specRetention); read is how.
	bySpec map[string]time.Duration
	read   func(runID string) (time.Duration, error)
}

// retentionOf reads the retention: of each registered workflow file.
func retentionOf(workflows []api.Workflow, def time.Duration) (retention, error) {
	r := retention{byName: map[string]time.Duration{}, def: def, bySpec: map[string]time.Duration{}}
	for _, w := range workflows {
		src, err := spec.ReadWorkflowFile(w.File)
		if err != nil {
			return r, fmt.Errorf("read %s: %w", w.File, err)
		}
		wf, ds := (&spec.Loader{}).Load(w.File, src)
		if ds.HasErrors() {
			return r, fmt.Errorf("%s is invalid:\n%s", w.File, ds.Error())
		}
		if wf.Retention.IsSet() {
			r.byName[wf.Name] = wf.Retention.D
		}
	}
	return r, nil
}

// expired selects the closed runs kept longer than their retention at now.
func (r retention) expired(now time.Time) func(history.Run) bool {
	return func(run history.Run) bool {
		d := r.of(run)
		return d > 0 && run.ClosedAt.Before(now.Add(-d))
	}
}

// of is how long run is kept once closed.
func (r retention) of(run history.Run) time.Duration {
	if d, ok := r.byName[run.Name]; ok {
		return d
	}
	if run.SpecSHA256 == "" || r.read == nil {
		return r.def
	}
	d, ok := r.bySpec[run.SpecSHA256]
	if !ok {
		var err error
		if d, err = r.read(run.RunID); err != nil {
			return r.def // unreadable: the default, and the next pass tries again
		}
		r.bySpec[run.SpecSHA256] = d
	}
	if d > 0 {
		return d
	}
	return r.def
}

// specRetention reads the retention: of the spec text a run started with (its WorkflowStarted
// event); 0 when it has none.
func specRetention(st history.Store, runID string) (time.Duration, error) {
	evs, err := st.Events(runID, 0)
	if err != nil {
		return 0, err
	}
	if len(evs) == 0 || evs[0].Type != history.WorkflowStarted {
		return 0, fmt.Errorf("run %s: no start event", runID)
	}
	started, err := history.DataOf[history.Started](evs[0])
	if err != nil {
		return 0, err
	}
	w, _ := spec.Load("", []byte(started.SpecSource))
	if w == nil {
		return 0, nil
	}
	return w.Retention.D, nil
}

// every is how often serve purges: each minute, or as often as the shortest retention known
// when that is shorter (but at most once a second). While no retention is known at all (no
// --retention, none registered, none in a spec text met so far) it looks only once an hour,
// for runs whose text declares one: a pass decodes every run record.
func (r retention) every() time.Duration {
	known := slices.Collect(maps.Values(r.byName))
	for _, d := range r.bySpec {
		if d > 0 {
			known = append(known, d)
		}
	}
	if r.def > 0 {
		known = append(known, r.def)
	}
	if len(known) == 0 {
		return time.Hour
	}
	return max(min(time.Minute, slices.Min(known)), time.Second)
}

// runRetention purges the expired runs of p periodically, in the background, and returns the
// function that stops it (waiting for a purge in progress to end between two of its batches).
func runRetention(logf func(string, ...any), p server.Purger, r retention) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			purgeExpired(ctx, logf, p, r)
			select {
			case <-ctx.Done():
				return
			case <-time.After(r.every()): // a spec met in this pass may have shortened it
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// purgeExpired is one pass of retention; it says with logf what it purged or what failed.
func purgeExpired(ctx context.Context, logf func(string, ...any), p server.Purger, r retention) {
	runs, err := p.PurgeCandidates(r.expired(time.Now()))
	if err != nil {
		logf("wend: retention: %v", err)
		return
	}
	if len(runs) == 0 {
		return
	}
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = run.RunID
	}
	purged, err := p.PurgeRuns(ctx, ids, nil)
	if len(purged) > 0 {
		logf("wend: retention: purged %d closed run(s)", len(purged))
	}
	if err != nil && ctx.Err() == nil {
		logf("wend: retention: %v", err)
	}
}

// StartRetention starts wend serve's periodic purge of the closed runs past their retention
// (def for runs whose workflow declares none; 0 keeps them); Stop ends it first, between two
// of its batches.
func (a *App) StartRetention(workflows []api.Workflow, def time.Duration) error {
	r, err := retentionOf(workflows, def)
	if err != nil {
		return err
	}
	r.read = func(runID string) (time.Duration, error) { return specRetention(a.Store, runID) }
	a.stopRetention = runRetention(a.logf, a.Store, r)
	return nil
}
