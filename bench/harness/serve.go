package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/api/client"
)

// Options say which `wend serve` to start and when it is ready.
type Options struct {
	// Bin is the program: a built cmd/wend, or a command built on wend's command line.
	Bin string
	// DB is the database; the control socket is DB + ".sock".
	DB string
	// Flags follow `serve --db DB --http off` (no TCP listener), e.g. --workflows DIR.
	Flags []string
	// Log receives the process's stdout and stderr.
	Log string
	// Env is the process's environment; nil: this process's.
	Env []string
	// Stdin is the process's standard input; nil: none.
	Stdin io.Reader
	// Workflows is how many workflows --workflows registers; Start waits for them to be
	// listed (0: for the health route alone).
	Workflows int
	// ReadyWithin bounds the wait for ready; 0: a minute.
	ReadyWithin time.Duration
}

// Serve is a running `wend serve` and a client of its control socket.
type Serve struct {
	API *client.Client
	// Started is when the process was started; Ready is how long it took from then until
	// the socket answered as Options asked.
	Started time.Time
	Ready   time.Duration

	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited; then werr is its Wait error
	werr error
	once sync.Once
}

// pollEvery is how often Start asks whether the process is ready.
const pollEvery = 2 * time.Millisecond

// Start starts the process and returns once it is ready. On an error the process is not
// running.
func Start(o Options) (*Serve, error) {
	logf, err := os.Create(o.Log)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own descriptor
	s := &Serve{API: client.Unix(o.DB + ".sock"), log: o.Log, done: make(chan struct{})}
	s.cmd = exec.Command(o.Bin, append([]string{"serve", "--db", o.DB, "--http", "off"}, o.Flags...)...)
	s.cmd.Env, s.cmd.Stdin = o.Env, o.Stdin
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = ChildAttr()
	s.Started = time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.werr = s.cmd.Wait(); close(s.done) }()
	within := o.ReadyWithin
	if within == 0 {
		within = time.Minute
	}
	deadline := s.Started.Add(within)
	for {
		err := s.API.Ready(context.Background(), o.Workflows)
		if err == nil {
			s.Ready = time.Since(s.Started)
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return nil, fmt.Errorf("wend serve not ready after %s: %v\n%s", within, err, s.Tail())
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("wend serve exited before it was ready: %v\n%s", s.werr, s.Tail())
		case <-time.After(pollEvery):
		}
	}
}

// PID is the process's id.
func (s *Serve) PID() int { return s.cmd.Process.Pid }

// Exited is closed once the process has exited; then Err is its exit error.
func (s *Serve) Exited() <-chan struct{} { return s.done }

// Err is the process's exit error, once Exited is closed.
func (s *Serve) Err() error {
	<-s.done
	return s.werr
}

// State is the exited process's state (its CPU time); nil while it runs.
func (s *Serve) State() *os.ProcessState {
	select {
	case <-s.done:
		return s.cmd.ProcessState
	default:
		return nil
	}
}

// Run starts a run of the registered workflow under id and waits until it has closed; an
// error unless it completed (client.Client.RunToEnd).
func (s *Serve) Run(ctx context.Context, id, workflow string, input json.RawMessage) error {
	return s.API.RunToEnd(ctx, id, workflow, input)
}

// Start starts a run of the registered workflow under id, answered once its start is durable;
// an error when the id names a run already.
func (s *Serve) Start(ctx context.Context, id, workflow string, input json.RawMessage) error {
	st, err := s.API.Start(ctx, api.StartRequest{WorkflowID: id, Workflow: workflow, Input: input})
	if err == nil && !st.Started {
		err = fmt.Errorf("start %s: not started (id taken)", id)
	}
	return err
}

// WaitsForSignal says whether the run waits for a signal now.
func (s *Serve) WaitsForSignal(id string) (bool, error) {
	d, err := s.API.Show(id)
	if err != nil {
		return false, err
	}
	for _, w := range d.Waits {
		if w.Kind == "signal" { // runview.WaitSignal
			return true, nil
		}
	}
	return false, nil
}

// stopWithin bounds the wait for a clean exit after SIGTERM.
const stopWithin = time.Minute

// Stop closes the client's connections, sends SIGTERM and waits for a clean exit (status 0);
// after a minute it kills the process and says so. The duration is signal to exit.
func (s *Serve) Stop() (time.Duration, error) {
	s.API.Close()
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("stop wend serve: %v", err)
	}
	select {
	case <-s.done:
		if s.werr != nil {
			return time.Since(start), fmt.Errorf("wend serve exited after SIGTERM: %v", s.werr)
		}
		return time.Since(start), nil
	case <-time.After(stopWithin):
		s.Kill()
		return 0, errors.New("wend serve still running a minute after SIGTERM; killed")
	}
}

// Kill ends the process at once unless it has exited, and reaps it; its plugins die with it
// (the plugin host starts them with a parent-death signal). Safe to call more than once.
func (s *Serve) Kill() {
	s.once.Do(func() {
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Kill()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
		}
	})
}

// Tail is the end of the process's log, for error messages.
func (s *Serve) Tail() string { return Tail(s.log) }

// Tail is the end of a log file, for error messages.
func Tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return fmt.Sprintf("--- %s (end) ---\n%s", path, b)
}
