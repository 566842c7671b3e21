package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/wendflow/wend/cli"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/temporal/driver"
	"github.com/wendflow/wend/temporal/worker"
	"github.com/wendflow/wend/tracing"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

var workerCmd = cli.Command{
	Summary: "host wend runs and their plugins for a Temporal cluster",
	Usage: `Usage: wend worker --temporal HOST:PORT [--namespace N] [--task-queue Q]
                   [--max-activities N] [--state DIR] [--grace DURATION]

Polls task queue Q of the Temporal cluster and runs what it is given: the generic workflow
wend.v1 (wend's interpreter, one per run) and the activities that call plugins, each try
exactly once (wend keeps the retries). Plugins start, stop, restart and are pinned as they
are locally; the processes are recorded in DIR, and a worker started again on DIR first
kills those a killed worker left behind. Start as many workers as you like, on as many
machines: they share the work, and killing one loses nothing: a try it was running is
heard from no more, and 8 seconds later it is redelivered as the next attempt (not counted
against the step's tries), as a crash is locally. SIGTERM or Ctrl-C stops it gracefully: no
new tasks, running tries get --grace to finish, then what still runs is cancelled and
redelivered at once, plugins stop, and it exits 0. A rolling restart (stop one, start it,
next) costs no run and no try.

WEND_PLUGIN_START_TIMEOUT (a duration such as 2m) gives plugins longer than the default 30s
to start, as it does for local commands.

OTEL_TRACES_EXPORTER=otlp|console (off by default) exports the spans of the runs, steps and
plugin tries the worker hosts, in each run's trace, configured by the standard OTEL_*
variables as local commands are; each try's plugin gets its W3C traceparent, and the lines
about a run or a failed try carry trace_id and span_id. Give every worker the same OTEL_*.

Plugin commands resolve against the workflow file's folder as the client that started the
run saw it: give every worker the same tree at the same path.

Flags:
  --temporal HOST:PORT  the cluster's frontend (default $WEND_TEMPORAL)
  --namespace N         namespace (default $WEND_NAMESPACE, else default)
  --task-queue Q        task queue (default $WEND_TASK_QUEUE, else wend)
  --max-activities N    plugin tries and workflow waits run at once (default: the SDK's)
  --state DIR           the worker's plugin registry, one worker per folder
                        (default $WEND_WORKER_STATE, else .wend/worker)
  --grace DURATION      how long running tries may finish after SIGTERM or Ctrl-C
                        (default 30s)

Exit codes: 0 stopped by a signal, 2 usage error or the cluster cannot be reached.
`,
	Run: runWorker,
}

func runWorker(sys cli.IO, t *cli.Temporal, args []string) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	maxActs := fs.String("max-activities", "", "")
	state := fs.String("state", "", "")
	grace := fs.Duration("grace", 30*time.Second, "")
	if err := fs.Parse(args); err != nil {
		return usage(sys, "%v", err)
	}
	if fs.NArg() > 0 {
		return usage(sys, "unexpected argument %q", fs.Arg(0))
	}
	if *grace <= 0 {
		return usage(sys, "--grace: %s is not a positive duration; give how long running tries may finish, such as 30s", *grace)
	}
	if t == nil {
		return usage(sys, "no cluster named; give --temporal HOST:PORT (or set WEND_TEMPORAL)")
	}
	n := 0
	if *maxActs != "" {
		var err error
		if n, err = strconv.Atoi(*maxActs); err != nil || n < 1 {
			return usage(sys, "--max-activities: %q must be a whole number, at least 1", *maxActs)
		}
	}
	dir := *state
	if dir == "" {
		dir = sys.Getenv("WEND_WORKER_STATE")
	}
	if dir == "" {
		dir = ".wend/worker"
	}
	startTimeout := cli.PluginStartTimeout(sys)
	traces, err := tracing.FromEnv(context.Background(), sys.Getenv, sys.Stderr)
	if err != nil {
		fmt.Fprintf(sys.Stderr, "wend worker: traces: %v\n", err)
		return 2
	}
	traces.NameSteps(runview.StartedStepIDs) // spans named by the steps' ids, as locally
	defer flushTraces(sys, traces)
	// The SDK's own lines at warning and above: its default logs every timer at debug level.
	logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(sys.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: t.Address, Namespace: t.Namespace, Logger: logger})
	if err != nil {
		fmt.Fprintf(sys.Stderr, "wend worker: connect to Temporal at %s (namespace %s): %v\n", t.Address, t.Namespace, err)
		return 2
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = worker.Run(ctx, worker.Options{Client: c, TaskQueue: t.TaskQueue, MaxActivities: n, StateDir: dir,
		PluginStartTimeout: startTimeout, StopTimeout: *grace, Traces: traces,
		RegisterWorkflow: func(r worker.Registry) { driver.RegisterWith(r, workflowOptions(traces)) }, Log: sys.Stderr,
		Ready: func() {
			fmt.Fprintf(sys.Stderr, "wend worker: polling task queue %s of namespace %s at %s (state %s)\n", t.TaskQueue, t.Namespace, t.Address, dir)
		}})
	if err != nil {
		fmt.Fprintf(sys.Stderr, "wend worker: %v\n", err)
		return 2
	}
	fmt.Fprintln(sys.Stderr, "wend worker: stopped")
	return 0
}

func usage(sys cli.IO, format string, args ...any) int {
	fmt.Fprintf(sys.Stderr, "wend worker: %s\ntry: wend help worker\n", fmt.Sprintf(format, args...))
	return 2
}

// flushWait bounds the export of the spans still queued when the worker stops.
const flushWait = 5 * time.Second

// flushTraces exports the spans still queued, once the worker has stopped.
func flushTraces(sys cli.IO, traces *tracing.Provider) {
	if traces == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushWait)
	defer cancel()
	if err := traces.Shutdown(ctx); err != nil {
		fmt.Fprintf(sys.Stderr, "wend worker: traces: the last spans were not exported: %v\n", err)
	}
}
