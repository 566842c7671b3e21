// Package worker is `wend worker`: a Temporal worker hosting the wend.v1 workflow and the
// activities that call plugins (wire.ActivityCallBuild, which also names the plugin build
// that answered; wire.ActivityCall for older runs) and wait for other runs
// (wire.ActivityAwait). Plugins run as they do locally, through plugins.Router: one process
// per declaration, pinned by sha256, recorded in a registry so the next worker started with
// the same state folder kills those a killed worker left behind. With Options.Traces each
// plugin try is exported as a span in its run's trace, and a try that did not complete gets
// a log line with its trace ids (traces.go).
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/tracing"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Options configure Run.
type Options struct {
	// Client is the connection to the cluster; Run does not close it.
	Client    client.Client
	TaskQueue string // default wire.DefaultTaskQueue
	// MaxActivities bounds the activities (plugin tries and workflow waits) run at once;
	// 0 is the SDK's default.
	MaxActivities int
	// StateDir holds the worker's plugin registry (and its lock): one worker per folder.
	StateDir string
	// RegisterWorkflow registers the wend.v1 workflow (driver.Register); nil registers only
	// the activities, for a worker that runs plugins and no workflow code.
	RegisterWorkflow func(Registry)
	// Log receives the worker's own lines and plugin stderr ("plugin NAME: LINE").
	Log io.Writer
	// StopTimeout is how long running activities get to finish once ctx ends before they
	// are cancelled (and redelivered). Default 30s.
	StopTimeout time.Duration
	// PluginStartTimeout bounds a plugin's start (handshake and first health check), as
	// plugins.Options.StartTimeout does locally. Default: the host's (30s).
	PluginStartTimeout time.Duration
	// Traces, when set, exports a span per plugin try (tracing.FromEnv), and the workflow
	// RegisterWorkflow registers exports the run and step spans when it is given the same
	// provider (driver.RegisterWith); Run does not shut it down.
	Traces *tracing.Provider
	// Ready, when set, is called once the worker polls its task queue.
	Ready func()
}

// Registry is what RegisterWorkflow registers on.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// registryFile is the plugin registry inside StateDir.
const registryFile = "worker.plugins"

// Run hosts wend on the task queue until ctx ends (SIGTERM in `wend worker`), then stops
// gracefully: no new tasks, running activities get StopTimeout, plugins are stopped.
func Run(ctx context.Context, o Options) error {
	if o.Client == nil {
		return errors.New("worker: no Temporal client")
	}
	if o.TaskQueue == "" {
		o.TaskQueue = wire.DefaultTaskQueue
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 30 * time.Second
	}
	if o.StateDir == "" {
		return errors.New("worker: no state folder for the plugin registry")
	}
	unlock, err := lockState(o.StateDir)
	if err != nil {
		return err
	}
	defer unlock()
	registry := filepath.Join(o.StateDir, registryFile)
	reap(o.Log, registry)
	router := plugins.NewRouter(pluginOptions(o, registry))
	defer router.Close()

	w := sdkworker.New(o.Client, o.TaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize: o.MaxActivities,
		// The grace is this worker's own (graceOver below): the SDK waits a little longer, so
		// the tries cut off at the grace still report WorkerStopped before it gives up.
		WorkerStopTimeout: o.StopTimeout + reportTimeout,
		// Beats reach the server well inside wire.LivenessTimeout even on a loaded worker.
		MaxHeartbeatThrottleInterval: wire.MaxBeatInterval,
	})
	if o.RegisterWorkflow != nil {
		o.RegisterWorkflow(w)
	}
	var served BuildPlugins = router // so each try's outcome names its plugin build
	graceOver := make(chan struct{})
	acts := &Activities{Plugins: served, Client: o.Client, Traces: o.Traces, Log: o.Log, graceOver: graceOver}
	acts.Register(w)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker on task queue %s: %w", o.TaskQueue, err)
	}
	if o.Ready != nil {
		o.Ready()
	}
	<-ctx.Done()
	t := time.AfterFunc(o.StopTimeout, func() { close(graceOver) })
	defer t.Stop()
	w.Stop() // no new tasks; waits for running activities; their plugins stop below
	return nil
}

// reportTimeout is how long past its grace a stopping worker waits for the tries it cut off
// to report themselves stopped, so they are redelivered at once.
const reportTimeout = 5 * time.Second

// pluginOptions are the worker's plugin host options: the same host as a local engine's.
func pluginOptions(o Options, registry string) plugins.Options {
	return plugins.Options{Registry: registry, StartTimeout: o.PluginStartTimeout,
		Log: func(plugin, line string) { fmt.Fprintf(o.Log, "plugin %s: %s\n", plugin, line) }}
}

// reap kills the plugin processes a killed worker of this state folder left running.
// Problems with the registry are warnings: they must not keep a worker from starting.
func reap(log io.Writer, registry string) {
	rep, err := plugins.Reap(registry)
	if err != nil {
		fmt.Fprintf(log, "wend worker: warning: %v\n", err)
	}
	if rep.Corrupt > 0 {
		fmt.Fprintf(log, "wend worker: warning: dropped %d unreadable line(s) of plugin registry %s\n", rep.Corrupt, registry)
	}
	if len(rep.Reaped) > 0 {
		fmt.Fprintf(log, "wend worker: reaped %d plugin process(es) left by a previous worker\n", len(rep.Reaped))
	}
}

// lockState takes the state folder for this worker alone: a plugin registry has one owner,
// and a second worker reaping it would kill the first one's plugins.
func lockState(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("worker state folder: %w", err)
	}
	path := filepath.Join(dir, "worker.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("worker state folder: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("worker state folder %s is in use by another wend worker; give each worker its own --state", dir)
	}
	return func() { f.Close() }, nil
}
