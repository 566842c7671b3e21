package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/sdk/go/wire"
)

// process is one running plugin: the go-plugin client, our runner and the gRPC client.
type process struct {
	name         string
	grace        time.Duration
	startTimeout time.Duration
	client       *plugin.Client
	runner       *procRunner
	conn         *grpc.ClientConn
	rpc          pluginv1.ActivitiesClient
	stderr       *stderrLog
	lanes        lanes
	build        string // sha256 of the code it runs ("" when unknown)
	program      string // the resolved program, for a start error's hint

	stopOnce     sync.Once
	stopped      chan struct{} // closed once stop has returned
	killedAtStop bool          // stop had to kill the group: Shutdown did not end it in time

	useMu   sync.Mutex
	uses    int  // tries (and Describes) running on it
	retired bool // replaced by a roll: stops when uses drops to 0
}

// killWait bounds how long stop waits for go-plugin's Kill after the group was killed; past it
// the goroutines go-plugin still runs are abandoned rather than blocking the host.
const killWait = 5 * time.Second

// quietLogger silences go-plugin's own logging: the host reports what matters as errors and
// forwards the plugin's stderr through Options.Log.
var quietLogger = hclog.New(&hclog.LoggerOptions{Level: hclog.Off, Output: io.Discard})

// startProcess starts program (already resolved and verified) with cfg's arguments and waits
// for the handshake and a health check.
func startProcess(cfg Config, program string, opts Options) (*process, error) {
	if cfg.StartTimeout > 0 {
		opts.StartTimeout = cfg.StartTimeout
	}
	p, err := handshake(cfg, program, opts)
	if err != nil {
		return nil, err
	}
	if err := p.checkHealth(opts.StartTimeout); err != nil {
		p.stop()
		return nil, startError(TypeBadHandshake, true, "start plugin %s: health check: %v%s", p.name, err, p.stderr.last())
	}
	p.runner.refresh()
	if note := p.probeLanes(opts.StartTimeout); note != "" {
		opts.Log(p.name, note)
	}
	return p, nil
}

// handshake starts program and reads go-plugin's handshake: the first half of startProcess,
// which `wend plugin test` reports apart from the health check.
func handshake(cfg Config, program string, opts Options) (*process, error) {
	p := &process{name: cfg.Name, grace: opts.StopGrace, startTimeout: opts.StartTimeout,
		stderr: &stderrLog{plugin: cfg.Name, log: opts.Log}, stopped: make(chan struct{}), program: program}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		Plugins:          plugin.PluginSet{wire.PluginName: &wire.GRPCPlugin{}},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		GRPCDialOptions:  wire.DialOptions(),
		SkipHostEnv:      true,
		StartTimeout:     opts.StartTimeout,
		Stderr:           p.stderr,
		// A Go plugin's stdout and stderr after the handshake arrive over go-plugin's stdio
		// stream, not the pipes; without these go-plugin would discard them.
		SyncStderr: p.stderr,
		SyncStdout: &stderrLog{plugin: cfg.Name, log: opts.Log},
		Logger:     quietLogger,
		// go-plugin passes a blank command carrying its variables (cookie, mTLS certificate,
		// socket dir); the plugin's own command and allow-listed environment are ours.
		RunnerFunc: func(_ hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
			cmd := exec.Command(program, cfg.Command[1:]...)
			cmd.Dir = cfg.Dir
			group := groupToken()
			cmd.Env = append(append(cfg.environ(), spec.Env...), wire.HostPIDEnv+"="+strconv.Itoa(os.Getpid()), groupEnv+"="+group)
			p.runner = newRunner(cfg.Name, cmd)
			p.runner.group = group
			p.runner.reg, p.runner.log = registryAt(opts.Registry), opts.Log
			// A plugin in another language that prints to stdout after its handshake gets
			// the lines logged as its stderr's are, not dropped.
			p.runner.afterHandshake = &stderrLog{plugin: cfg.Name, log: opts.Log}
			return p.runner, nil
		},
	})
	rpc, err := p.client.Client()
	if err != nil {
		return nil, p.startFailed(err)
	}
	raw, err := rpc.Dispense(wire.PluginName)
	if err != nil {
		p.stop()
		return nil, startError(TypeBadHandshake, true, "start plugin %s: %v%s", p.name, err, p.stderr.last())
	}
	p.rpc = raw.(pluginv1.ActivitiesClient)
	p.conn = rpc.(*plugin.GRPCClient).Conn
	return p, nil
}

// checkHealth makes the first gRPC call (TLS handshake included) under the start timeout, so a
// plugin that handshakes and then cannot serve fails here, not in the middle of a try.
func (p *process) checkHealth(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := grpc_health_v1.NewHealthClient(p.conn).Check(ctx,
		&grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName}, grpc.WaitForReady(true))
	if err != nil {
		return err
	}
	if resp.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		return fmt.Errorf("service %q is %s", plugin.GRPCServiceName, resp.Status)
	}
	return nil
}

// startFailed turns go-plugin's start error into a typed error carrying the plugin's stderr.
func (p *process) startFailed(err error) error {
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	if p.runner == nil || p.runner.pid == 0 {
		p.stop()
		return startError(TypeStartFailed, true, "start plugin %s: %v", p.name, err)
	}
	exited := msg == "plugin exited before we could connect" ||
		strings.Contains(msg, "Failed to read any lines from plugin's stdout")
	if exited { // let the reaper record the real exit status before stop kills anything
		select {
		case <-p.runner.done:
		case <-time.After(time.Second):
		}
	}
	status := p.runner.exitStatus()
	p.stop() // also waits for go-plugin to drain stderr, so the tail is complete
	tail := p.stderr.last()
	switch {
	case strings.HasPrefix(msg, "timeout while waiting for plugin to start"):
		return startError(TypeStartTimeout, false, "start plugin %s: no handshake within %s; killed it (a slow start on a busy machine: start_timeout: 2m in the plugin's declaration allows more)%s", p.name, p.startTimeout, tail)
	case exited:
		return startError(TypeExited, true, "start plugin %s: exited before the handshake (%s)%s%s", p.name, status, tail, interpreterHint(p.name, p.program, tail))
	case strings.HasPrefix(first, "Unrecognized remote plugin message: "):
		line := strings.TrimPrefix(first, "Unrecognized remote plugin message: ")
		return startError(TypeBadHandshake, true, "start plugin %s: expected the go-plugin handshake on stdout, got %q (a plugin must not print to stdout before serving)%s", p.name, line, tail)
	default:
		return startError(TypeBadHandshake, true, "start plugin %s: bad handshake: %s%s", p.name, lowerFirst(first), tail)
	}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// stop shuts the plugin down: go-plugin's Kill asks it to exit (GRPCController.Shutdown) and
// waits; if that takes longer than the grace — a frozen plugin makes it wait for ever — the
// process group is killed.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		defer close(p.stopped)
		p.lanes.close()
		if p.lanes.fast != nil {
			defer p.lanes.fast.removeDir() // after the process is gone
		}
		done := make(chan struct{})
		go func() {
			p.client.Kill()
			close(done)
		}()
		select {
		case <-done:
			return
		case <-time.After(p.grace):
		}
		p.killedAtStop = true
		if p.runner != nil {
			p.runner.killGroup()
		}
		select {
		case <-done:
		case <-time.After(killWait):
		}
	})
}

// kill kills the process group and waits (briefly) until the process is reaped, so the next
// call sees it dead and starts a new one instead of failing on this one.
func (p *process) kill() {
	p.runner.killGroup()
	select {
	case <-p.runner.done:
	case <-time.After(crashWait):
	}
}

// acquire counts a use; the caller holds its slot's lock, so a roll cannot retire the process
// between the choice and the count.
func (p *process) acquire() {
	p.useMu.Lock()
	p.uses++
	p.useMu.Unlock()
}

// release ends a use; the last use of a retired process stops it.
func (p *process) release() {
	p.useMu.Lock()
	p.uses--
	idle := p.retired && p.uses == 0
	p.useMu.Unlock()
	if idle {
		go p.stop()
	}
}

// retire marks a process a roll replaced: it takes no new tries, finishes those it runs, and
// stops when the last ends (at once when idle). Host.Close stops it in any case.
func (p *process) retire() {
	p.useMu.Lock()
	p.retired = true
	idle := p.uses == 0
	p.useMu.Unlock()
	if idle {
		go p.stop()
	}
}

func (p *process) isStopped() bool {
	select {
	case <-p.stopped:
		return true
	default:
		return false
	}
}

func (p *process) alive() bool {
	return p.runner != nil && !p.runner.exited()
}

var errNoPID = errors.New("no pid")

// pid is the plugin's process id, which is also its process group id.
func (p *process) pid() (int, error) {
	if p.runner == nil || p.runner.pid == 0 {
		return 0, errNoPID
	}
	return p.runner.pid, nil
}
