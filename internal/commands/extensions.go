package commands

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/plugins/builtin"
)

// Backend is server.Backend, what the commands that read or steer runs use. Another engine
// answers those commands by implementing it.
type Backend = backend

// Temporal names the Temporal cluster a command goes to: --temporal HOST:PORT (default
// $WEND_TEMPORAL), --namespace (default $WEND_NAMESPACE, else "default") and --task-queue
// (default $WEND_TASK_QUEUE, else "wend").
type Temporal struct {
	Address   string
	Namespace string
	TaskQueue string
}

// Extensions are what a binary built on this package adds to wend's commands; the public
// package cli mirrors them for such binaries. wend-temporal adds the Temporal backend and
// the worker; this package itself never links the Temporal SDK, so the plain wend binary
// stays small and hands --temporal commands over (handoff.go).
type Extensions struct {
	// OpenTemporal connects to a cluster, for a command given --temporal (or WEND_TEMPORAL).
	OpenTemporal func(Temporal) (Backend, error)
	// Commands are added to wend's, e.g. "worker".
	Commands map[string]Command
	// Activities, when set, answers every activity call of the runs this binary drives
	// (run, resume, serve) in this process, in place of the plugins, which are then never
	// started: a binary that embeds its activities as Go code.
	Activities engine.Activities
}

// Command is an added command. Temporal is nil when the command line names no cluster.
type Command struct {
	Summary string
	Usage   string // full help text, starting with the usage line
	Run     func(io IO, t *Temporal, args []string) int
}

// IO is what an added command may touch of the process.
type IO struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// MainWith is Main for a binary built on this one (the public package cli): it serves a
// builtin plugin when a plugin host started it as one (a worker's own executable serves the
// builtins, as wend's does), else runs the command line with extensions. It never hands
// commands to another binary: it is that binary.
func MainWith(x Extensions) int {
	if name := builtin.Requested(); name != "" {
		return builtin.Serve(name)
	}
	return RunWith(x, IO{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args[1:])
}

// RunWith runs the wend command line with extensions on sys and args and returns the exit
// code.
func RunWith(x Extensions, sys IO, args []string) int {
	return run(&env{stdout: sys.Stdout, stderr: sys.Stderr, getenv: sys.Getenv, ext: &x}, args)
}

// temporalDefaults are the defaults of --namespace and --task-queue.
const (
	defaultNamespace = "default"
	defaultTaskQueue = "wend"
)

// engineCommands read or steer runs, so an engine answers them: this machine's database by
// default, a Temporal cluster with --temporal. The other commands (validate, plugin, schema,
// version, help) never touch runs and ignore WEND_TEMPORAL.
var engineCommands = map[string]bool{
	"run": true, "list": true, "show": true, "history": true, "signal": true, "cancel": true,
	"terminate": true, "retry": true, "repair": true, "check": true, "resume": true, "serve": true,
	"worker": true, "wait": true,
	"query": true, "schedule": true,
	"batch":   true, // --temporal: the namespace's batch operations (batch_cluster.go)
	"migrate": true,
}

// isEngineCommand reports whether the command line reads or steers runs: an engine command, or
// validate reading a cluster's open runs (--against temporal).
func isEngineCommand(name string, args []string) bool {
	return engineCommands[name] || name == "validate" && readsCluster(args)
}

// notOnTemporal are the engine commands that have no meaning against a cluster, and why.
var notOnTemporal = map[string]string{
	"resume": "Temporal workers drive the runs there; start one with 'wend worker --temporal ADDR'",
}

// temporalFlags are the flags that name a cluster, with their environment defaults.
var temporalFlags = []struct{ name, env string }{
	{"temporal", "WEND_TEMPORAL"}, {"namespace", "WEND_NAMESPACE"}, {"task-queue", "WEND_TASK_QUEUE"},
}

// temporalTarget reads the cluster flags out of a command's arguments (before any "--", as
// -f V, --f V, -f=V or --f=V) and returns the cluster, or nil when the command runs on this
// machine's database, and the arguments without those flags. WEND_TEMPORAL names a cluster
// unless the command line gives --db: an explicit flag beats the environment either way.
func temporalTarget(args []string, getenv func(string) string) (*Temporal, []string, error) {
	given := map[string]string{}
	var rest []string
	db := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := flagParts(a)
		if name == "db" {
			db = true
		}
		known := false
		for _, f := range temporalFlags {
			known = known || name == f.name
		}
		if !known {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return nil, nil, fmt.Errorf("flag needs an argument: -%s", name)
			}
			i++
			value = args[i]
		}
		given[name] = value
	}
	addr, explicit := given["temporal"]
	if !explicit {
		addr = getenv("WEND_TEMPORAL")
	}
	switch {
	case explicit && addr == "":
		return nil, nil, fmt.Errorf("--temporal needs HOST:PORT, e.g. --temporal localhost:7233")
	case explicit && db:
		return nil, nil, fmt.Errorf("give --db or --temporal, not both")
	case addr == "" || (!explicit && db):
		for _, f := range temporalFlags[1:] {
			if _, ok := given[f.name]; ok {
				return nil, nil, fmt.Errorf("--%s names a Temporal setting; give --temporal HOST:PORT (or set WEND_TEMPORAL) too", f.name)
			}
		}
		return nil, rest, nil
	}
	t := &Temporal{Address: addr, Namespace: defaultNamespace, TaskQueue: defaultTaskQueue}
	for _, f := range []struct {
		name, env string
		to        *string
	}{{"namespace", "WEND_NAMESPACE", &t.Namespace}, {"task-queue", "WEND_TASK_QUEUE", &t.TaskQueue}} {
		v, ok := given[f.name]
		if !ok {
			v = getenv(f.env)
		}
		if ok && v == "" {
			return nil, nil, fmt.Errorf("--%s needs a value", f.name)
		}
		if v != "" {
			*f.to = v
		}
	}
	return t, rest, nil
}

// flagParts splits "-name", "--name" or "--name=value"; name is "" for a non-flag.
func flagParts(a string) (name, value string, hasValue bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", "", false
	}
	a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, value, hasValue = strings.Cut(a, "=")
	return name, value, hasValue
}

// openTemporal opens the backend on the cluster the command line named.
func (e *env) openTemporal() (backend, error) {
	if e.ext == nil || e.ext.OpenTemporal == nil {
		return nil, fmt.Errorf("this wend cannot reach Temporal; use the wend-temporal binary")
	}
	return e.ext.OpenTemporal(*e.temporal)
}

// lookup finds a command, wend's own or an added one.
func (e *env) lookup(name string) (*command, bool) {
	if c, ok := commands[name]; ok {
		return c, true
	}
	if e.ext == nil {
		return nil, false
	}
	x, ok := e.ext.Commands[name]
	if !ok {
		return nil, false
	}
	return &command{summary: x.Summary, usage: x.Usage, run: func(e *env, args []string) int {
		return x.Run(IO{Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv}, e.temporal, args)
	}}, true
}

// names lists every command this binary answers.
func (e *env) names() []string {
	var out []string
	for n := range commands {
		out = append(out, n)
	}
	if e.ext != nil {
		for n := range e.ext.Commands {
			if _, dup := commands[n]; !dup {
				out = append(out, n)
			}
		}
	}
	return out
}

// selectEngine reads the cluster flags of an engine command into e.temporal and returns the
// arguments left for the command; ok is false when it printed a usage error.
func selectEngine(e *env, name string, args []string) ([]string, int, bool) {
	if !isEngineCommand(name, args) || e.ext == nil {
		return args, 0, true
	}
	t, rest, err := temporalTarget(args, e.getenv)
	if err != nil {
		return nil, usageError(e, name, "%v", err), false
	}
	if t != nil {
		if why, no := notOnTemporal[name]; no {
			fmt.Fprintf(e.stderr, "wend %s: not available with --temporal: %s\n", name, why)
			return nil, exitUsage, false
		}
	}
	e.temporal = t
	return rest, 0, true
}
