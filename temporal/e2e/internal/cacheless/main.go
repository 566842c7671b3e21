// Command cacheless is `wend worker` with the SDK's sticky workflow cache turned off, for
// the end-to-end tests: every workflow task then replays the run's full history through the
// driver, so a nondeterministic decision fails the run instead of hiding in the cache. It
// hosts exactly what `wend-temporal worker` hosts (worker.Run with driver.RegisterWith, and
// traces when OTEL_TRACES_EXPORTER names an exporter), and serves the built-in plugins (http,
// exec) when its plugin host starts it for one, as wend does.
//
//	cacheless --temporal HOST:PORT --state DIR [--task-queue Q] [--grace DURATION]
//
// SIGTERM stops it gracefully, as `wend worker` (--grace as there).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/plugins/builtin"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/temporal/driver"
	"github.com/wendflow/wend/temporal/wire"
	"github.com/wendflow/wend/temporal/worker"
	"github.com/wendflow/wend/tracing"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
)

func main() {
	if name := builtin.Requested(); name != "" { // the plugin host started this program to serve a builtin
		os.Exit(builtin.Serve(name))
	}
	addr := flag.String("temporal", "", "frontend HOST:PORT")
	queue := flag.String("task-queue", wire.DefaultTaskQueue, "task queue")
	state := flag.String("state", "", "plugin registry folder")
	grace := flag.Duration("grace", 30*time.Second, "how long running tries may finish after SIGTERM")
	flag.Parse()
	if *addr == "" || *state == "" {
		fmt.Fprintln(os.Stderr, "cacheless: --temporal and --state are required")
		os.Exit(2)
	}
	sdkworker.SetStickyWorkflowCacheSize(0)
	traces, err := tracing.FromEnv(context.Background(), os.Getenv, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cacheless: traces: %v\n", err)
		os.Exit(2)
	}
	traces.NameSteps(runview.StartedStepIDs) // as wend-temporal worker does
	c, err := client.Dial(client.Options{HostPort: *addr, Namespace: wire.DefaultNamespace})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cacheless: dial %s: %v\n", *addr, err)
		os.Exit(2)
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = worker.Run(ctx, worker.Options{Client: c, TaskQueue: *queue, StateDir: *state, StopTimeout: *grace, Traces: traces,
		RegisterWorkflow: func(r worker.Registry) { driver.RegisterWith(r, workflowOptions(traces)) },
		Ready:            func() { fmt.Fprintln(os.Stderr, "cacheless: ready") }})
	flushTraces(traces)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cacheless: %v\n", err)
		os.Exit(2)
	}
}

// workflowOptions traces the workflow's runs when the worker exports traces, as
// `wend-temporal worker` does.
func workflowOptions(traces *tracing.Provider) driver.Options {
	if traces == nil {
		return driver.Options{}
	}
	return driver.Options{Spans: func(run history.Run, started history.Event) driver.Spans {
		return traces.RunSpans(run, started)
	}}
}

// flushTraces exports the spans still queued once the worker has stopped.
func flushTraces(traces *tracing.Provider) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := traces.Shutdown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "cacheless: traces: %v\n", err)
	}
}
