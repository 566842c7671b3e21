// Package app assembles wend's application over one database: the store (boltstore), the
// plugins, the engine, and what wend serve runs beside them (the schedules, the batches and
// the retention purge). `wend serve`, `wend run` and the other commands that drive runs in
// process open an App; internal/commands keeps the flags and what is printed.
//
// An App is opened in two steps, so what it reports can be printed in the order it happens:
// Open opens the store, reaps the plugin processes a dead wend left, and recovers the open
// runs; StartSchedules, StartBatches and StartRetention then start what serve runs. Close
// stops them all, in the order a clean stop needs (Stop, CloseEngine, Close).
package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/metrics"
	"github.com/wendflow/wend/tracing"
)

// flushWait bounds how long a clean stop waits for the last spans to reach the collector.
const flushWait = 5 * time.Second

// Options say how to assemble an App.
type Options struct {
	// Path is the database file; its plugin processes are recorded beside it
	// (PluginRegistry).
	Path string
	// Version is wend's, published by the metrics.
	Version string
	// Activities, when set, run the activities instead of the plugins the workflows declare
	// (a binary that extends wend: wend-temporal's worker).
	Activities engine.Activities
	// PluginStartTimeout bounds a plugin's start (0: the host's default); PluginLog gets each
	// line a plugin writes to its stderr.
	PluginStartTimeout time.Duration
	PluginLog          func(plugin, line string)
	// Observe makes what sees every committed event (the step lines; after the spans when
	// Traces is set). It is called once the store is open, before any run resumes, so what it
	// makes may read the store.
	Observe func(st history.Store) func(history.Run, history.Event)
	// Traces, when set, exports the runs' spans; the App shuts it down on Close (and on a
	// failed Open).
	Traces *tracing.Provider
	// Logf prints the App's own lines ("wend: ..."): a batch paused, a retention purge, a span
	// export that failed.
	Logf func(format string, args ...any)
	// IdleAfter, MaxActivities and Clock are engine.Options' (a test's fake clock).
	IdleAfter     time.Duration
	MaxActivities int
	Clock         engine.Clock
	// RepairAfterReady starts with engine.Resume: ready without replaying the waiting runs,
	// the repair at start in the background (wend serve); else engine.Recover.
	RepairAfterReady bool
}

// App is wend over one database: its parts are open from Open to Close.
type App struct {
	Path    string
	Store   *boltstore.Store
	Plugins *plugins.Router
	Engine  *engine.Engine
	// Meter times the engine's commits and holds the metrics wend serve publishes at /metrics.
	Meter *metrics.Metrics
	// Reaped is what Open found of a dead wend's plugin processes, ReapErr why the registry
	// could not be read whole; Recovered is what resuming the open runs found.
	Reaped    plugins.ReapReport
	ReapErr   error
	Recovered engine.RecoverReport
	// Schedules and Batches are wend serve's, once started; nil before.
	Schedules *runner.Runner
	Batches   *batch.Runner

	logf          func(format string, args ...any)
	traces        *tracing.Provider
	schedMetrics  *metrics.ScheduleMetrics
	stopSchedules func()
	stopRetention func()
	stopOnce      sync.Once
	engineOnce    sync.Once
	closeOnce     sync.Once
}

// PluginRegistry is where the plugin processes started for database db are recorded, so the
// next wend over it can reap those a crash left.
func PluginRegistry(db string) string { return db + ".plugins" }

// OpenStore opens the database at path for reading and writing, without an engine (the
// commands that read runs or keep the store: backup, check, schedule).
//
// A file an older wend wrote is upgraded to the current layout first: seconds over 100,000
// runs, told to logf (nil: told to no one) as it goes.
func OpenStore(path string, logf func(string, ...any)) (*boltstore.Store, error) {
	return boltstore.Open(path, boltstore.Options{UpgradeProgress: upgradeProgress(logf)})
}

// upgradeProgress tells logf how an upgrade of the file's layout goes: after its first
// transaction, then at most once a second, and at its end.
func upgradeProgress(logf func(string, ...any)) func(boltstore.UpgradeProgress) {
	if logf == nil {
		return nil
	}
	var last time.Time
	return func(p boltstore.UpgradeProgress) {
		if !last.IsZero() && p.Seen < p.Total && time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		logf("upgrading the database to this wend's layout: %d of %d runs looked at, %d moved", p.Seen, p.Total, p.Moved)
	}
}

// OpenReadOnly opens the database at path for reading only: it writes nothing, so reading
// works on a full disk (list, show, check).
func OpenReadOnly(path string) (*boltstore.Store, error) {
	return boltstore.Open(path, boltstore.Options{ReadOnly: true})
}

// Open opens the database at o.Path, reaps the plugin processes a dead wend left (now, while
// it holds the database: no other wend uses it), starts the engine over the plugins and
// resumes the open runs. The error of a database another process holds is
// boltstore.ErrInUse.
func Open(o Options) (*App, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	st, err := OpenStore(o.Path, o.Logf)
	if err != nil {
		if o.Traces != nil {
			_ = o.Traces.Shutdown(context.Background())
		}
		return nil, err
	}
	a := &App{Path: o.Path, Store: st, logf: logf, traces: o.Traces, Meter: metrics.New(o.Version)}
	a.Reaped, a.ReapErr = plugins.Reap(PluginRegistry(o.Path))
	a.Plugins = plugins.NewRouter(plugins.Options{Registry: PluginRegistry(o.Path), StartTimeout: o.PluginStartTimeout, Log: o.PluginLog})
	a.Meter.SetPluginStats(func() metrics.PluginStats {
		s := a.Plugins.Stats()
		return metrics.PluginStats{Processes: s.Processes, Starts: s.Starts, Restarts: s.Restarts}
	})
	var lines func(history.Run, history.Event)
	if o.Observe != nil {
		lines = o.Observe(st)
	}
	var acts engine.Activities = a.Plugins
	if o.Activities != nil {
		acts = o.Activities
	}
	a.Engine = engine.New(engine.Options{Store: a.Meter.TimeCommits(st), Activities: acts, Observe: a.observe(lines),
		Logf: logf, IdleAfter: o.IdleAfter, MaxActivities: o.MaxActivities, Clock: o.Clock, TraceContext: o.Traces != nil})
	a.logMetricsCatchUp()
	resume := a.Engine.Recover
	if o.RepairAfterReady {
		resume = a.Engine.Resume
	}
	if a.Recovered, err = resume(context.Background()); err != nil {
		a.Close()
		return nil, fmt.Errorf("resume unfinished runs: %w", err)
	}
	return a, nil
}

// observe is the engine's Observe hook: the spans when traces are exported, then the step
// lines. Spans go first: they only queue for the exporter, and the lines may print in the
// background anyway.
func (a *App) observe(lines func(history.Run, history.Event)) func(history.Run, history.Event) {
	if lines == nil {
		lines = func(history.Run, history.Event) {}
	}
	if a.traces == nil {
		return lines
	}
	store := a.Store
	obs := a.traces.NewObserver(func(runID string) ([]history.Event, error) { return store.Events(runID, 0) }, a.logf)
	a.Meter.SetTraceDrops(obs.Dropped)
	return func(run history.Run, ev history.Event) {
		obs.Observe(run, ev)
		lines(run, ev)
	}
}

// Server is a Server over the App's engine and store, with the schedules, the batches and
// the plugin roll the App runs, and the workflows given registered.
func (a *App) Server(workflows []api.Workflow) *server.Server {
	s := server.New(a.Engine, a.Store)
	if len(workflows) > 0 {
		s.SetWorkflows(workflows) // before listening: a client must never see an empty registry
	}
	a.Configure(s)
	return s
}

// Configure gives s what the App runs beyond the engine: its plugin roll, its schedules and
// its batches, once started. Call it before s listens.
func (a *App) Configure(s *server.Server) {
	s.SetPluginRoller(func(plugin string) []api.PluginRoll {
		var out []api.PluginRoll
		for _, r := range a.Plugins.Roll(plugin) {
			pr := api.PluginRoll{Plugin: r.Plugin, OldPID: r.OldPID, OldSHA256: r.OldSHA256, NewPID: r.NewPID, NewSHA256: r.NewSHA256}
			if r.Err != nil {
				pr.Error = r.Err.Error()
			}
			out = append(out, pr)
		}
		return out
	})
	if a.Schedules != nil {
		s.SetSchedules(a.Schedules)
	}
	if a.Batches != nil {
		s.SetBatches(a.Batches)
	}
}

// Stop stops what acts on runs beside the engine: the retention purge (between two of its
// batches), the schedules (no fire may reach a closing engine) and the batches (between two
// runs; they resume at the next start).
func (a *App) Stop() {
	a.stopOnce.Do(func() {
		if a.stopRetention != nil {
			a.stopRetention()
		}
		if a.stopSchedules != nil {
			a.stopSchedules()
		}
		if a.Batches != nil {
			a.Batches.Close()
		}
	})
}

// CloseEngine stops the engine after the commit in flight (after Stop). Close the servers
// over it first: no request may reach an engine that is closing.
func (a *App) CloseEngine() {
	a.Stop()
	a.engineOnce.Do(func() { a.Engine.Close() })
}

// Close closes what is left (after CloseEngine): it exports the spans still queued (before
// the store: the span builder may read a run's history), stops the plugins and closes the
// store.
func (a *App) Close() {
	a.CloseEngine()
	a.closeOnce.Do(func() {
		if a.traces != nil {
			ctx, cancel := context.WithTimeout(context.Background(), flushWait)
			if err := a.traces.Shutdown(ctx); err != nil {
				a.logf("wend: traces: the last spans were not exported: %v", err)
			}
			cancel()
		}
		a.Plugins.Close()
		a.Meter.Keep() // the metrics' sum: the next serve then reads no run to catch up
		a.Store.Close()
	})
}

// logMetricsCatchUp says when the metrics count every stored run once, in the background:
// the first start over a database no wend has counted (one an older wend wrote). Only its
// start is told: logf is not for other goroutines (a command's stderr buffer in tests).
func (a *App) logMetricsCatchUp() {
	select {
	case <-a.Meter.CaughtUp():
	default:
		a.logf("metrics: counting the stored runs once, in the background (no count was kept); /metrics leaves out the step, attempt, activity and failure families until it ends")
	}
}
