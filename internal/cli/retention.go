package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
)

// retention is how long wend serve keeps closed runs: a workflow's own retention: (from the
// files --workflows registers), else the --retention default; 0 keeps them.
type retention struct {
	byName map[string]time.Duration
	def    time.Duration
}

// retentionOf reads the retention: of each registered workflow file.
func retentionOf(workflows []server.Workflow, def time.Duration) (retention, error) {
	r := retention{byName: map[string]time.Duration{}, def: def}
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

// any reports whether some runs are to be purged at all.
func (r retention) any() bool { return r.def > 0 || len(r.byName) > 0 }

// expired selects the closed runs kept longer than their retention at now.
func (r retention) expired(now time.Time) func(history.Run) bool {
	return func(run history.Run) bool {
		d, ok := r.byName[run.Name]
		if !ok {
			d = r.def
		}
		return d > 0 && run.ClosedAt.Before(now.Add(-d))
	}
}

// every is how often serve purges: each minute, or as often as the shortest retention when
// that is shorter (but at most once a second).
func (r retention) every() time.Duration {
	every := time.Minute
	for _, d := range r.byName {
		every = min(every, d)
	}
	if r.def > 0 {
		every = min(every, r.def)
	}
	return max(every, time.Second)
}

// runRetention purges the expired runs of p periodically, in the background, and returns the
// function that stops it (waiting for a purge in progress to end between two of its batches).
func runRetention(e *env, p server.Purger, r retention) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(r.every())
		defer tick.Stop()
		for {
			purgeExpired(ctx, e, p, r)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// purgeExpired is one pass of retention; it says on stderr what it purged or what failed.
func purgeExpired(ctx context.Context, e *env, p server.Purger, r retention) {
	runs, err := p.PurgeCandidates(r.expired(time.Now()))
	if err != nil {
		fmt.Fprintf(e.stderr, "wend: retention: %v\n", err)
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
		fmt.Fprintf(e.stderr, "wend: retention: purged %d closed run(s)\n", len(purged))
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(e.stderr, "wend: retention: %v\n", err)
	}
}

// startRetention starts wend serve's periodic purge when a retention applies; stop is nil
// when none does.
func (d *driver) startRetention(workflows []server.Workflow, def time.Duration) (stop func(), err error) {
	r, err := retentionOf(workflows, def)
	if err != nil || !r.any() {
		return nil, err
	}
	p, ok := d.store.(server.Purger)
	if !ok {
		return nil, fmt.Errorf("this store cannot delete runs")
	}
	return runRetention(d.e, p, r), nil
}
