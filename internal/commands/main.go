package commands

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"

	"github.com/wendflow/wend/plugins/builtin"
	"github.com/wendflow/wend/spec"
)

// Exit codes shared by every command; with run's outcome codes (run.go) each number has one
// meaning across all commands, listed in the README's "Exit codes" table. Internal errors
// take 70 (EX_SOFTWARE of sysexits.h) so that 3 and 4 stay a run's outcomes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitInternal = 70
)

// env is what a command may touch of the process; tests swap it.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	ext            *Extensions // what the binary adds (RunWith); nil for plain wend
	temporal       *Temporal   // the cluster this command goes to; nil: this machine's database
}

type command struct {
	summary string
	usage   string // full help text, starting with the usage line
	run     func(e *env, args []string) int
}

var commands map[string]*command

func init() {
	commands = map[string]*command{
		"validate": validateCmd,
		"run":      runCmd,
		"plugin":   pluginCmd,
		"schema":   schemaCmd,
		"version":  versionCmd,
		"list":     listCmd,
		"show":     showCmd,
		"query":    queryCmd,
		"signal":   signalCmd,
		"cancel":   cancelCmd,
		"serve":    serveCmd,
		"resume":   resumeCmd,
		"check":    checkCmd,
		"test":     testCmd,
		"graph":    graphCmd, // graph.go

		// Operating runs: stop, resume, repair and export them.
		"terminate": terminateCmd,
		"retry":     retryCmd,
		"repair":    repairCmd,
		"history":   historyCmd,
		"wait":      waitCmd,
		"purge":     purgeCmd,   // purge.go
		"batch":     batchCmd,   // batch.go: the bulk operations wend serve runs
		"migrate":   migrateCmd, // migrate.go: open runs moved to a new text of their file

		"completion": completionCmd,

		// Schedules (schedule.go).
		"schedule": scheduleCmd,

		// The database file: backup and compaction (backup.go, compact.go).
		"backup":  backupCmd,
		"compact": compactCmd,
	}
}

// Main runs the wend command line and returns the process exit code. A command for a
// Temporal cluster is handed to the wend-temporal binary (handoff.go).
func Main() int {
	if name := builtin.Requested(); name != "" { // a plugin host started wend to serve a builtin
		return builtin.Serve(name)
	}
	e := &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	args, err := hoistGlobalFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(e.stderr, "wend: %v\ntry: wend help\n", err)
		return exitUsage
	}
	if wantsTemporal(args, os.Getenv) {
		return handoff(e, args)
	}
	return run(e, args)
}

func run(e *env, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "wend: internal error: %v\n%s\nplease report this with the command you ran\n", r, debug.Stack())
			code = exitInternal
		}
	}()
	args, err := hoistGlobalFlags(args)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend: %v\ntry: wend help\n", err)
		return exitUsage
	}
	if len(args) == 0 {
		printHelp(e, e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] != "help" {
			c, ok := e.lookup(args[1])
			if !ok {
				// A typo must not look like an answer: no general help, exit 2.
				fmt.Fprintf(e.stderr, "wend help: unknown command %q%s\ntry: wend help\n", args[1], e.didYouMean(args[1]))
				return exitUsage
			}
			fmt.Fprint(e.stdout, c.usage)
			return exitOK
		}
		printHelp(e, e.stdout)
		return exitOK
	case "--version", "-version":
		name = "version"
	}
	c, ok := e.lookup(name)
	if !ok {
		fmt.Fprintf(e.stderr, "wend: unknown command %q%s\ntry: wend help\n", name, e.didYouMean(name))
		return exitUsage
	}
	if wantsHelp(args[1:]) {
		fmt.Fprint(e.stdout, c.usage)
		return exitOK
	}
	rest, code, ok := selectEngine(e, name, args[1:])
	if !ok {
		return code
	}
	return c.run(e, rest)
}

// didYouMean is " (did you mean \"run\"?)" for the command closest to name, or "".
func (e *env) didYouMean(name string) string {
	if s := spec.Closest(name, e.names()); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

func printHelp(e *env, w io.Writer) {
	fmt.Fprint(w, "wend runs declarative YAML workflows durably.\n\nUsage: wend [--db PATH] COMMAND [ARGS]\n\nCommands:\n")
	names := e.names()
	sort.Strings(names)
	for _, n := range names {
		c, _ := e.lookup(n)
		fmt.Fprintf(w, "  %-10s %s\n", n, c.summary)
	}
	fmt.Fprint(w, "\nRun 'wend help COMMAND' for a command's flags and exit codes.\n")
	fmt.Fprint(w, "--db PATH (and --temporal, --namespace, --task-queue) may also come before the command.\n")
	fmt.Fprint(w, "Shell completion: 'wend completion bash|zsh|fish' (wend help completion).\n")
	fmt.Fprint(w, "On a Temporal cluster: add --temporal HOST:PORT [--namespace N] [--task-queue Q] (or set\n"+
		"WEND_TEMPORAL) to run, list, show, history, signal, cancel, terminate, retry, wait and\n"+
		"check, and start workers with 'wend worker' (these need the wend-temporal program; README,\n"+
		"Scaling out).\n")
}

// usageError prints a usage problem with a hint and returns exitUsage.
func usageError(e *env, cmd, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "wend %s: %s\ntry: wend help %s\n", cmd, fmt.Sprintf(format, args...), cmd)
	return exitUsage
}

// wantsHelp reports whether args ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			return true
		}
		if a == "--" {
			return false
		}
	}
	return false
}
