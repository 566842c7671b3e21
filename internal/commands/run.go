package commands

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/app"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/inputfile"
	"github.com/wendflow/wend/internal/tracecontext"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/tracing"
)

// Exit codes of `wend run` by outcome.
const (
	exitRunFailed    = 1
	exitRunCancelled = 3
	exitRunTimedOut  = 4
	exitInterrupted  = 130
)

var runCmd = &command{
	summary: "start a workflow run and drive it to the end",
	usage: `Usage: wend run FILE [--input JSON | --input-file F] [--id ID] [--detach] [--db PATH]
                [--max-activities N] [--traceparent TRACEPARENT]

Starts a run of the workflow in FILE and drives it in this process until it ends: a line
per step event on stderr, the run's output JSON on stdout. Other unfinished runs in the
database are resumed too. While it runs, other wend commands (signal, show, list, cancel,
run) reach it over a unix socket beside the database (PATH.sock). When another wend
process holds the database, the run starts there and this command follows it, with the
same output and exit codes. The run is durable: after Ctrl-C or a crash, 'wend run' with the
same --id (or 'wend resume') picks it up where its committed history ends.

Flags:
  --input JSON       the run's input (checked against the workflow's input schema)
  --input-file F     read the input from file F ("-" for stdin)
  --id ID            workflow id (at most 255 bytes, no control characters); when a run
                     with this id exists and started with the same input, follow it
                     instead of starting a second one; with other input, refuse (exit 1)
                     and name it: 'wend wait ID' follows it
  --detach           start the run and return at once (print its ids); drive it later with
                     'wend resume' or 'wend serve'
  --db PATH          database file (default $WEND_DB, else .wend/wend.db)
  --max-activities N activity calls made at once, across the runs this process drives
                     (default 256); a try over it waits for a free slot before it starts.
                     A wend process that already holds the database keeps its own
  --traceparent TRACEPARENT
                     a W3C trace context (00-<trace id>-<span id>-<flags>) to run under:
                     the run's spans and its plugin calls join that trace. Kept in the
                     run's history, so a resumed run stays in it

Traces: OTEL_TRACES_EXPORTER=otlp (or console: JSON on stderr) exports a span for the
run, each activity step and each try, configured by the standard OTEL_* variables
(OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...); off by default.

Exit codes: 0 completed, 1 failed, 2 usage or I/O error, 3 cancelled, 4 timed out,
130 interrupted (the run resumes later).
`,
	run: runRun,
}

func runRun(e *env, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	input := fs.String("input", "", "")
	inputFile := fs.String("input-file", "", "")
	id := fs.String("id", "", "")
	detach := fs.Bool("detach", false, "")
	db := dbFlag(fs)
	maxActs := maxActivitiesFlag(fs)
	traceparent := fs.String("traceparent", "", "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "run", "%s", flagError(err))
	}
	if msg := checkMaxActivities(*maxActs); msg != "" {
		return usageError(e, "run", "%s", msg)
	}
	if len(pos) != 1 {
		return usageError(e, "run", "want exactly one workflow FILE, got %d arguments", len(pos))
	}
	if *input != "" && *inputFile != "" {
		return usageError(e, "run", "give --input or --input-file, not both")
	}
	if err := engine.CheckID("workflow id", *id); err != nil {
		return usageError(e, "run", "--id: %v", err)
	}
	if *traceparent != "" {
		if _, err := tracecontext.Parse(*traceparent); err != nil {
			return usageError(e, "run", "--traceparent: %v", err)
		}
	}
	raw, err := readInput(*input, *inputFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend run: %v\n", err)
		return exitUsage
	}
	if err := engine.CheckPayload("input", raw); err != nil {
		fmt.Fprintf(e.stderr, "wend run: %v\n", err)
		return exitUsage
	}
	src, err := spec.ReadWorkflowFile(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "wend run: %v\n", err)
		return exitUsage
	}
	// Check the file here, so findings name it as the user wrote it (the run records the
	// absolute path, and a remote holder would report that).
	if _, ds := spec.Load(pos[0], src); ds.HasErrors() {
		fmt.Fprintf(e.stderr, "wend run: start %s: the workflow is invalid:\n%s\n", pos[0], ds.Error())
		return exitFailed
	}
	// The run records an absolute path: run_workflow children and plugin paths resolve against
	// it when the run resumes, maybe from another folder.
	file, err := filepath.Abs(pos[0])
	if err != nil {
		file = pos[0]
	}
	req := engine.StartRequest{WorkflowID: *id, SpecFile: file, Source: string(src), Input: raw, TraceParent: *traceparent}
	if e.temporal != nil {
		return runOnTemporal(e, pos[0], req, *detach)
	}
	return driveOrFollowWith(e, "run", dbPath(e, *db), driverOptions{maxActivities: *maxActs}, nil,
		func(c *client) int { return runRemote(e, c, req, *detach) },
		func(d *driver) int {
			rec, created, err := d.Engine.Start(context.Background(), engine.StartRequest{WorkflowID: *id, SpecFile: pos[0], Source: string(src), Input: raw, TraceParent: *traceparent})
			if err != nil {
				return startRefused(e, err, raw)
			}
			if !created && rec.Status == history.StatusRunning {
				d.announceFollow(rec)
			}
			sayQueued(e, d.Engine, rec)
			if *detach {
				fmt.Fprintf(e.stdout, "%s %s\n", rec.WorkflowID, rec.RunID)
				return exitOK
			}
			return d.follow(rec.WorkflowID)
		})
}

// startRefused reports a start the engine refused: exit 2 for an input the schema refuses
// (the command line was wrong), 1 otherwise.
func startRefused(e *env, err error, input json.RawMessage) int {
	fmt.Fprintf(e.stderr, "wend run: %v\n", err)
	noInputHint(e, err, input)
	if errors.Is(err, engine.ErrInvalidInput) {
		return exitUsage
	}
	return exitFailed
}

func readInput(inline, file string) (json.RawMessage, error) {
	var raw []byte
	where := "--input"
	switch {
	case inline != "":
		raw = []byte(inline)
	case file == "-":
		b, err := readAllStdin()
		if err != nil {
			return nil, err
		}
		raw, where = b, "stdin"
	case file != "":
		b, err := inputfile.Read(file, engine.MaxPayloadBytes)
		var big *inputfile.TooBigError
		if errors.As(err, &big) {
			return nil, fmt.Errorf("the input is %d bytes, over the limit of %d (2 MiB)", big.Size, big.Limit)
		}
		if err != nil {
			return nil, fmt.Errorf("read input: %w", err)
		}
		raw, where = b, file
	default:
		return json.RawMessage("null"), nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("input is not valid JSON: %s", jsonProblem(where, raw))
	}
	return raw, nil
}

// jsonProblem says where in raw (read from where) its JSON goes wrong: the line and column
// of the syntax error and what the decoder expected there.
func jsonProblem(where string, raw []byte) string {
	var v any
	err := json.Unmarshal(raw, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Sprintf("%s: %v", where, err)
	}
	line, col := 1, 1
	for _, c := range raw[:min(int(se.Offset), len(raw))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	// The offset is just past the byte that broke the syntax; point at that byte.
	if col > 1 {
		col--
	}
	return fmt.Sprintf("%s:%d:%d: %v", where, line, col, se)
}

// noInputHint is what a refused input adds when the command was given none: the schema
// wanted fields, so say how to pass them.
func noInputHint(e *env, err error, input json.RawMessage) {
	if errors.Is(err, engine.ErrInvalidInput) && string(input) == "null" {
		fmt.Fprintln(e.stderr, "wend run: no input was given; pass the run's input with --input JSON or --input-file FILE")
	}
}

func readAllStdin() ([]byte, error) {
	b, err := inputfile.ReadAll(os.Stdin, "standard input", engine.MaxPayloadBytes)
	if err != nil {
		return nil, fmt.Errorf("read input from stdin: %w", err)
	}
	return b, nil
}

// driver is an engine over the database with plugins, for commands that drive runs.
// driver is a command's hold on the application (package app) it opened over the database:
// the socket other commands reach it by, and the step lines it prints.
type driver struct {
	*app.App
	e    *env
	path string
	ctl  *server.UnixServer // the control socket; nil when it could not be made
	prog *progress
	// blocked lists the runs Recover could not resume ("RUNID (WORKFLOW ID): why").
	blocked      []string
	stopProgress func() // set when the step lines print in the background
}

func startDriver(e *env, path string, workflows ...api.Workflow) (*driver, error) {
	return startDriverWith(e, path, driverOptions{}, workflows...)
}

// driverOptions are what wend serve sets beyond startDriver's defaults.
type driverOptions struct {
	idleAfter     time.Duration // engine.Options.IdleAfter
	maxActivities int           // engine.Options.MaxActivities; 0: the default
	schedules     bool          // run the schedules the workflows declare (app.StartSchedules)
	batches       bool          // run batches, resuming those a stop left running (app.StartBatches)
	// background prints the step lines on a goroutine of their own (progress.background),
	// off the engine's commit path; wend run prints them in line, before its result.
	background bool
	// repairAfterReady starts with engine.Resume: ready without replaying the waiting runs,
	// the repair at start in the background (wend serve).
	repairAfterReady bool
}

func startDriverWith(e *env, path string, o driverOptions, workflows ...api.Workflow) (*driver, error) {
	traces, err := tracing.FromEnv(context.Background(), e.getenv, e.stderr)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	traces.NameSteps(runview.StartedStepIDs) // spans named by the steps' ids
	logf := func(format string, args ...any) { fmt.Fprintf(e.stderr, format+"\n", args...) }
	d := &driver{path: path, e: e, prog: newProgress(e.stderr)}
	d.prog.traces = traces != nil
	observe := func(st history.Store) func(history.Run, history.Event) {
		d.prog.started = func(runID string) (history.Started, bool) { return startedOf(st, runID) }
		return d.prog.observe
	}
	ao := app.Options{Path: path, Version: version, Observe: observe, Traces: traces, Logf: logf,
		PluginStartTimeout: pluginStartTimeout(e),
		PluginLog:          func(plugin, line string) { fmt.Fprintf(e.stderr, "plugin %s: %s\n", plugin, line) },
		IdleAfter:          o.idleAfter, MaxActivities: o.maxActivities, RepairAfterReady: o.repairAfterReady}
	if e.ext != nil && e.ext.Activities != nil {
		ao.Activities = e.ext.Activities
	}
	if o.background {
		// Before the engine: the runs it resumes print their lines from the start.
		d.stopProgress = d.prog.background()
	}
	a, err := app.Open(ao)
	if err != nil {
		if d.stopProgress != nil {
			d.stopProgress()
		}
		return nil, err
	}
	d.App = a
	reportReap(e, app.PluginRegistry(path), a.Reaped, a.ReapErr)
	rep := a.Recovered
	for _, b := range rep.Blocked {
		fmt.Fprintf(e.stderr, "wend: not resuming run %s\n", b)
	}
	if rep.Resumed > 0 {
		fmt.Fprintf(e.stderr, "wend: resumed %s, %s\n", plural(rep.Resumed, "unfinished run"), plural(rep.Tasks, "task"))
	}
	if n := d.Engine.QueuedRuns(); n > 0 {
		fmt.Fprintf(e.stderr, "wend: %d run(s) wait queued under their workflow's concurrency key\n", n)
	}
	if rep.Interrupted > 0 {
		fmt.Fprintf(e.stderr, "wend: redelivering %d activity call(s) in flight when wend stopped (recorded as interrupted; each is a new attempt)\n",
			rep.Interrupted)
	}
	d.blocked = rep.Blocked
	if o.schedules {
		n, err := d.StartSchedules(workflows)
		if err != nil {
			d.close()
			return nil, fmt.Errorf("schedules: %w", err)
		}
		if n > 0 {
			fmt.Fprintf(e.stderr, "wend: %s running\n", plural(n, "schedule"))
		}
	}
	if o.batches {
		if err := d.StartBatches(); err != nil {
			d.close()
			return nil, fmt.Errorf("batches: %w", err)
		}
	}
	d.ctl = serveControl(e, path, d.Server(workflows))
	return d, nil
}

func (d *driver) close() {
	d.Stop() // retention, schedules, batches: nothing may reach a closing engine
	if d.ctl != nil {
		d.ctl.Close() // then the socket: no request may reach an engine that is closing
	}
	d.CloseEngine()
	if d.stopProgress != nil {
		d.stopProgress() // after the engine: no event may be observed past it
	}
	d.Close() // spans, plugins, store
}

// follow waits for the workflow to end, printing its output, and maps the outcome to the exit
// code. The first Ctrl-C stops cleanly (the run resumes later); a second exits at once.
func (d *driver) follow(workflowID string) int {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintf(d.e.stderr, "wend: interrupted; stopping after the commit in flight (Ctrl-C again to exit at once)\n")
		stop()
		if _, ok := <-sigs; ok {
			os.Exit(exitInterrupted)
		}
	}()
	rec, err := d.Engine.WaitClosed(ctx, workflowID)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(d.e.stderr, "wend: run of %s stopped; it resumes with: wend run --id %s FILE (or wend resume)\n", workflowID, workflowID)
			return exitInterrupted
		}
		fmt.Fprintf(d.e.stderr, "wend run: %v\n", err)
		return exitFailed
	}
	return d.report(rec)
}

// announceFollow says, when wend run meets an open run of its id (a rerun after a crash or
// Ctrl-C), that it follows that run and what the run waits for: a retry due in minutes must
// not look like a hung command.
func (d *driver) announceFollow(rec history.Run) {
	waits, err := runWaits(local{server.New(d.Engine, d.Store), func() error { return nil }}, rec.RunID, time.Now())
	if err != nil {
		return
	}
	fmt.Fprintf(d.e.stderr, "wend run: %s (run %s) exists with this input: following it, waiting for %s\n", rec.WorkflowID, rec.RunID, waits)
}

// report prints a closed run's output (or failure) and returns its exit code.
func (d *driver) report(rec history.Run) int {
	c, err := closing(d.Engine, rec)
	if err != nil {
		fmt.Fprintf(d.e.stderr, "wend run: %v\n", err)
		return exitFailed
	}
	return outcomeExit(d.e, api.Outcome{Run: rec, Closed: true, Output: c.Output, Failure: c.Failure})
}

// closing reads the terminal event's payload of a run.
func closing(eng *engine.Engine, rec history.Run) (history.Closed, error) {
	ev, err := eng.LastEvent(rec.RunID)
	if err != nil {
		return history.Closed{}, err
	}
	return history.DataOf[history.Closed](ev)
}
