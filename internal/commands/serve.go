package commands

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
)

var serveCmd = &command{
	summary: "run the engine until stopped, serving the control socket, HTTP API, web UI and metrics",
	usage: `Usage: wend serve [--db PATH | --temporal HOST:PORT] [--http ADDR] [--allow-remote] [--token-file FILE]
                  [--read-token-file FILE] [--open-reads]
                  [--workflows DIR]...
                  [--idle-after DURATION] [--max-activities N] [--retention DURATION]

Holds the database and drives its runs until stopped: resumes every unfinished run at
start, fires timers, calls activities, and takes new runs, signals and cancels from other
wend commands (run, signal, cancel, list, show, check) over the control socket beside the
database (PATH.sock: it serves only the user running serve, by its 0600 file and, on
Linux, macOS and FreeBSD, by refusing another user's connection; those commands need no
token). Where it listens is printed on stderr, then a line per step event of every run.
Every minute it rebuilds tasks that open runs lost, as 'wend repair' does.

The first Ctrl-C (or SIGTERM) stops cleanly: no new requests, the commit in flight
finishes, activity calls in flight are cancelled and run again when the runs resume. A
second Ctrl-C exits at once; either way the runs resume later.

It also serves the HTTP API (/v1, the same as the socket's), the web UI (/ui/runs) and
Prometheus metrics (/metrics) on --http, behind two tokens (Authorization: Bearer TOKEN, or
the UI's login). The read token reads: runs, their events and exports, the UI's pages,
batches and schedules. The act token also acts: starts, signals, cancels, retries, batches,
backups, purges, schedule changes, repairs. Every route that returns run data needs one of
them, on a loopback address too; /v1/health, /metrics and the login page need none there.
The act token is --token-file, else $WEND_TOKEN, else PATH.token; the read token is
--read-token-file, else $WEND_READ_TOKEN, else PATH.read-token; each file is generated
(0600) on first start. To rotate one, replace or delete its file and restart serve: the
sessions of the old token end with it. --open-reads lets requests without a token read on
a loopback address, for a machine no one else uses; serve says so when it starts. The API
is described in docs/api.md.

--workflows DIR registers every *.wend.yaml and *.wend.yml file below DIR by its name:
field, so POST /v1/runs can start one by name ({"workflow": "NAME"}), GET /v1/workflows
lists them and the web UI's runs page has a form to start them. Give it once per folder,
as often as needed. The files are found and checked at start only (not watched: restart
to add, rename or remove one); an invalid file or a name in two files stops the start.
Each start by name reads the file again, so the run records the text it started with.

The schedules those files declare (schedules:, docs/language.md) fire while serve runs: each
fire is recorded in the database before its run starts, by workflow id SCHEDULE-TIME, and
fires missed while no serve ran are caught up at start within their catchup_window. See
'wend help schedule'.

With --temporal HOST:PORT (wend-temporal), it serves the same HTTP API, web UI and metrics
over the runs of a Temporal cluster instead of a database: no engine runs here (the
cluster's workers drive the runs), there is no control socket, and /metrics has wend_runs
alone (from the cluster's visibility store). Each token is its flag's file or variable, else one
generated for this process and printed. Plugin rolling is the workers' (wend plugin
roll), and --workflows registers files that POST /v1/runs starts on the cluster.

Flags:
  --db PATH           database file (default $WEND_DB, else .wend/wend.db)
  --temporal H:P      serve a Temporal cluster's runs (with --namespace, --task-queue)
  --http ADDR         HTTP address (default 127.0.0.1:8080; port 0 picks one; off: none)
  --listen ADDR       the same as --http
  --allow-remote      allow a non-loopback ADDR; every request then needs the token, which
                      must come from --token-file or $WEND_TOKEN
  --token-file FILE   file holding the act token: at least 128 bits, i.e. 32 hex digits or 22
                      other characters (openssl rand -hex 16); the same for $WEND_TOKEN
  --read-token-file FILE
                      file holding the read token (the same rules; or $WEND_READ_TOKEN);
                      it must differ from the act token
  --open-reads        reads need no token on a loopback --http (anyone on this machine
                      reads every run); not with --allow-remote
  --workflows DIR     register the workflow files below DIR by name (repeatable; read at
                      start, not watched)
  --log-format F      text or json: each line on stderr is a log/slog record (time, level,
                      msg; a step's line adds workflow_id and elapsed); plain: the lines
                      as wend run prints them. Default: text on a terminal, else plain
  --idle-after D      a run that has waited this long with no input (on a signal, a timer, a
                      child) leaves memory and is rebuilt from its history on its next input
                      (default 5m; 0 keeps every open run in memory)
  --max-activities N  activity calls made at once across every run (default 256); a try
                      over it waits for a free slot before it starts (not a try yet, its
                      timeout not running); /metrics counts the waiting calls
  --retention D       delete runs closed longer ago than D (default: keep them); a
                      workflow's retention: wins

--retention DURATION deletes closed runs once they have been closed that long (30d, 720h),
as 'wend purge' does, checking every minute: each with its events, tasks and index
entries, a few dozen runs per transaction; an open run never, and a child run only with
its parent.
A workflow's retention: (docs/language.md) wins: the file's that --workflows registers
under the run's name, else the one in the text the run started with. Without any, closed
runs are kept.

Exit codes: 0 stopped by Ctrl-C or SIGTERM, 1 the engine stopped on a failed commit, 2 usage
or I/O error (the database is held by another process).
`,
	run: runServe,
}

func runServe(e *env, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	db := dbFlag(fs)
	hf := addHTTPFlags(fs)
	fs.StringVar(hf.listen, "http", defaultListen, "") // --listen is the same flag, its older name
	var wfDirs dirList
	fs.Var(&wfDirs, "workflows", "")
	logFormat := fs.String("log-format", "", "")
	idleAfter := fs.Duration("idle-after", 5*time.Minute, "")
	maxActs := maxActivitiesFlag(fs)
	keep := fs.String("retention", "", "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "serve", "%s", flagError(err))
	}
	if msg := addrConflict(fs); msg != "" {
		return usageError(e, "serve", "%s", msg)
	}
	if msg := openReadsConflict(hf); msg != "" {
		return usageError(e, "serve", "%s", msg)
	}
	if len(pos) > 0 {
		return usageError(e, "serve", "unexpected argument %q", pos[0])
	}
	if msg := checkMaxActivities(*maxActs); msg != "" {
		return usageError(e, "serve", "%s", msg)
	}
	var keepFor time.Duration
	if *keep != "" {
		if keepFor, err = spec.ParseDuration(*keep); err != nil || keepFor <= 0 {
			return usageError(e, "serve", "--retention %q: give a positive duration like 30d or 720h", *keep)
		}
	}
	logs, err := serveLogger(e, *logFormat)
	if err != nil {
		return usageError(e, "serve", "%v", err)
	}
	if sl, ok := logs.(*slogLines); ok { // every line from here on is a log record
		defer sl.flush()
		se := *e
		se.stderr = sl
		e = &se
	}
	var workflows []api.Workflow
	if len(wfDirs) > 0 {
		// Before the database: a bad registry must not start (and resume) anything.
		if workflows, err = server.LoadWorkflows(wfDirs...); err != nil {
			fmt.Fprintf(e.stderr, "wend serve: --workflows: %v\n", err)
			return exitUsage
		}
	}
	if e.temporal != nil {
		if isFlagSet(fs, "idle-after") {
			return usageError(e, "serve", "--idle-after is for runs this process drives; with --temporal the workers drive them")
		}
		if isFlagSet(fs, "retention") {
			return usageError(e, "serve", "--retention is for this machine's database; a Temporal namespace has its own retention")
		}
		return serveCluster(e, hf, workflows)
	}
	path := dbPath(e, *db)
	if *idleAfter < 0 {
		return usageError(e, "serve", "--idle-after %s: give a duration of 0 or more", *idleAfter)
	}
	// Before the socket exists: a client that sees it answer may stop serve with SIGTERM at
	// once, and that must be the clean stop, not the signal's default death.
	sigs := notifyStop()
	d, err := startDriverWith(e, path, driverOptions{idleAfter: *idleAfter, maxActivities: *maxActs, schedules: true, batches: true, background: true, repairAfterReady: true}, workflows...)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend serve: %v\n", err)
		if errors.Is(err, boltstore.ErrInUse) {
			fmt.Fprintf(e.stderr, "wend serve: that process serves it already: use wend list, show, signal and run as usual\n")
		}
		return exitUsage
	}
	defer d.close()
	if d.ctl == nil {
		return exitUsage // serving is this command's point; serveControl said why
	}
	// A task lost to a bug or a hand-edited database must not leave a served run stuck.
	d.Engine.Watchdog(time.Minute)
	if err := d.StartRetention(workflows, keepFor); err != nil { // d.close stops it first
		fmt.Fprintf(e.stderr, "wend serve: retention: %v\n", err)
		return exitUsage
	}
	web, err := d.serveHTTP(hf, workflows)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend serve: %v\n", err)
		return exitUsage
	}
	if web != nil {
		defer web.Close() // runs before d.close: no request may reach a closing engine
	}
	if len(wfDirs) > 0 {
		reportWorkflows(e, workflows)
	}
	fmt.Fprintf(e.stderr, "wend: serving %s on %s (pid %d); Ctrl-C to stop\n", path, d.ctl.Path(), os.Getpid())
	return d.serveUntilStopped(sigs)
}

// dirList is a repeatable folder flag.
type dirList []string

func (l *dirList) String() string { return strings.Join(*l, ",") }

func (l *dirList) Set(dir string) error {
	*l = append(*l, dir)
	return nil
}

// reportWorkflows says which workflows are registered; both servers got them before they
// listened, so no client ever sees an empty registry.
func reportWorkflows(e *env, ws []api.Workflow) {
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Name
	}
	if len(names) == 0 {
		fmt.Fprintf(e.stderr, "wend: no workflow files found below --workflows\n")
		return
	}
	fmt.Fprintf(e.stderr, "wend: %s: %s\n", plural(len(ws), "registered workflow"), strings.Join(names, ", "))
}

// addrConflict refuses --http and --listen given together: both write the same variable, so
// which address won would depend on their order.
func addrConflict(fs *flag.FlagSet) string {
	var given []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "http" || f.Name == "listen" {
			given = append(given, f.Name)
		}
	})
	if len(given) < 2 {
		return ""
	}
	return "--http and --listen are the same flag; give one"
}

// notifyStop catches Ctrl-C and SIGTERM from here on. Never stopped: a second signal while
// serve closes must still exit at once.
func notifyStop() chan os.Signal {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	return sigs
}

// serveUntilStopped waits for Ctrl-C / SIGTERM (on sigs, from notifyStop) or a fatal engine
// error. The caller closes the driver, which is the clean stop; a second signal exits at once.
func (d *driver) serveUntilStopped(sigs chan os.Signal) int {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sigs:
			fmt.Fprintf(d.e.stderr, "wend: stopping after the commit in flight (Ctrl-C again to exit at once)\n")
			go func() {
				if _, ok := <-sigs; ok {
					os.Exit(exitInterrupted)
				}
			}()
			return exitOK
		case <-tick.C:
			if err := d.Engine.Err(); err != nil {
				fmt.Fprintf(d.e.stderr, "wend serve: %v\n", err)
				return exitFailed
			}
		}
	}
}
