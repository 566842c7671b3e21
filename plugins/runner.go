package plugins

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin/runner"
)

// procRunner is go-plugin's runner for one plugin process: the process and its descendants
// form one unit (a process group on Unix, a Job Object on Windows) that dies with the host and
// is killed whenever the process ends, so descendants that inherited its pipes (go-plugin#136)
// cannot outlive it or keep go-plugin waiting. How each OS does it: runner_<os>.go.
type procRunner struct {
	name string
	cmd  *exec.Cmd

	stdout, stderr *os.File // read ends; the plugin holds the write ends
	// afterHandshake gets what the plugin writes to stdout after its handshake line, which
	// go-plugin reads and drops; nil: dropped.
	afterHandshake io.Writer
	stderrEOF      chan struct{} // closed when go-plugin has read stderr to its end

	mu      sync.Mutex // guards kill against the reap, so a recycled pid is never signalled
	pid     int
	done    chan struct{} // closed once the process is reaped
	waitErr error

	group string    // the groupEnv value the process and its children carry
	reg   *registry // records the process for a later host's Reap; nil: none
	//lint:ignore U1000 used where the registry is kept (registry_linux.go)
	entry *regEntry                 // what reg holds for it (guarded by mu)
	log   func(plugin, line string) // for registry warnings

	//lint:ignore U1000 empty on Linux, used by the other OSes' launch
	guard osGuard // what the OS adds to end the process and its children with the host
}

var _ runner.Runner = (*procRunner)(nil)

func newRunner(name string, cmd *exec.Cmd) *procRunner {
	return &procRunner{name: name, cmd: cmd, done: make(chan struct{}), stderrEOF: make(chan struct{})}
}

// Start starts the plugin process with its stdout and stderr on fresh pipes; launch (one
// file per OS) ties the process and its children to the host's life and reaps it.
func (r *procRunner) Start(context.Context) error {
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return err
	}
	r.stdout, r.stderr = outR, errR
	r.cmd.Stdin = nil // the null device: a plugin never reads the host's terminal
	r.cmd.Stdout, r.cmd.Stderr = outW, errW
	err = r.launch()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		close(r.done)
		return err
	}
	return nil
}

func (r *procRunner) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// exitStatus describes how the process ended, e.g. "exit status 1" or "signal: killed".
func (r *procRunner) exitStatus() string {
	if !r.exited() {
		return "running"
	}
	if r.cmd.ProcessState == nil {
		return "not started"
	}
	return r.cmd.ProcessState.String()
}

// Wait is called by go-plugin after it has read both pipes to the end.
func (r *procRunner) Wait(context.Context) error {
	<-r.done
	r.stdout.Close()
	r.stderr.Close()
	var exitErr *exec.ExitError
	if errors.As(r.waitErr, &exitErr) {
		return nil // go-plugin only logs it; exitStatus reports it
	}
	return r.waitErr
}

func (r *procRunner) Kill(context.Context) error {
	r.killGroup()
	return nil
}

func (r *procRunner) Stdout() io.ReadCloser {
	if r.afterHandshake == nil {
		return r.stdout
	}
	return &afterFirstLine{ReadCloser: r.stdout, w: r.afterHandshake}
}

func (r *procRunner) Stderr() io.ReadCloser           { return r.stderr }
func (r *procRunner) Name() string                    { return r.name }
func (r *procRunner) ID() string                      { return strconv.Itoa(r.pid) }
func (r *procRunner) Diagnose(context.Context) string { return "" }

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// waitStderr waits up to d for the plugin's stderr to be read to its end.
func (r *procRunner) waitStderr(d time.Duration) {
	select {
	case <-r.stderrEOF:
	case <-time.After(d):
	}
}
