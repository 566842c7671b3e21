package cli

import (
	"io"
	"time"

	impl "github.com/wendflow/wend/internal/commands"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// Extensions are what a binary adds to wend's commands. The zero value adds nothing: the
// binary then behaves as wend, except that it never hands --temporal commands to a
// wend-temporal binary (it is the binary; without OpenTemporal they fail with a hint).
type Extensions struct {
	// OpenTemporal connects to a cluster for a command given --temporal (or WEND_TEMPORAL):
	// run, list, show, signal, cancel, wait, query, schedule and the other commands that read
	// or steer runs then go to the backend it returns, which they close when done. A backend
	// that also keeps schedules has a method ScheduleOps() server.ScheduleOps (and Sync, for
	// `wend schedule sync`).
	OpenTemporal func(Temporal) (server.Backend, error)
	// Commands are added to wend's, by name (wend-temporal's "worker"). A name wend already
	// has keeps wend's command. `wend help` lists the added ones with their Summary.
	Commands map[string]Command
	// Activities, when set, answers every activity call of the runs this binary drives (run,
	// resume, serve) in this process, in place of the plugins, which are then never started:
	// a binary whose activities are Go code embeds them here, as a Temporal worker registers
	// its Go activities. The call names the plugin and activity (history.ActivityCall), so
	// one implementation can serve several. Tries, timeouts, retries and history are the
	// engine's, as for plugins.
	Activities engine.Activities
}

// Command is an added command.
type Command struct {
	// Summary is the line `wend help` prints beside the name.
	Summary string
	// Usage is the full help text (`wend help NAME`, NAME --help), starting with the usage line.
	Usage string
	// Run runs the command with the arguments after its name and returns the exit code (0 ok,
	// 1 failed, 2 bad usage). t is the cluster the command line named, nil when it named none.
	Run func(sys IO, t *Temporal, args []string) int
}

// IO is what an added command may touch of the process: its output streams and environment.
type IO struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Temporal names the Temporal cluster a command goes to: --temporal HOST:PORT (default
// $WEND_TEMPORAL), --namespace (default $WEND_NAMESPACE, else "default") and --task-queue
// (default $WEND_TASK_QUEUE, else "wend"). --db on the command line beats WEND_TEMPORAL.
type Temporal struct {
	Address   string
	Namespace string
	TaskQueue string
}

// MainWith runs the wend command line (os.Args) with x and returns the exit code, for main:
// func main() { os.Exit(cli.MainWith(x)) }. Started by a plugin host to serve one of wend's
// builtin plugins (http, exec), the binary serves it instead, as wend does: a worker's
// workflows name builtins and the host starts its own executable for them.
func MainWith(x Extensions) int {
	return impl.MainWith(x.implementation())
}

// PluginStartTimeout is how long an added command that starts plugins gives each to start
// (WEND_PLUGIN_START_TIMEOUT, as wend's own commands read it); 0 means the plugin host's
// default. A value that is not a positive duration is reported on sys.Stderr and ignored.
func PluginStartTimeout(sys IO) time.Duration {
	return impl.PluginStartTimeout(impl.IO(sys))
}

// run is MainWith on given streams and arguments.
func run(x Extensions, sys IO, args []string) int {
	return impl.RunWith(x.implementation(), impl.IO(sys), args)
}

// implementation converts x to the command line's own types.
func (x Extensions) implementation() impl.Extensions {
	out := impl.Extensions{Activities: x.Activities}
	if open := x.OpenTemporal; open != nil {
		out.OpenTemporal = func(t impl.Temporal) (impl.Backend, error) { return open(Temporal(t)) }
	}
	if len(x.Commands) > 0 {
		out.Commands = make(map[string]impl.Command, len(x.Commands))
		for name, c := range x.Commands {
			out.Commands[name] = impl.Command{Summary: c.Summary, Usage: c.Usage,
				Run: func(sys impl.IO, t *impl.Temporal, args []string) int { return c.Run(IO(sys), (*Temporal)(t), args) }}
		}
	}
	return out
}
