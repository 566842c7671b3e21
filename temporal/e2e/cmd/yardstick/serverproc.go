package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wendflow/wend/bench/harness"
	"github.com/wendflow/wend/temporal/e2e/devserver"
)

// The dev server can run in this process or as a process of its own: this command started
// again with -devserver-child, which starts devserver, prints readyWord, its frontend and
// namespace on a line of stdout, answers each "cpu" line on stdin with the CPU time it has
// used, and stops the server when stdin closes (or on SIGTERM). That is how users run a dev
// server (`temporal server start-dev`): every workflow and activity task then travels from
// the server to the yardstick's workers over gRPC between processes.
const (
	readyWord = "devserver-ready"
	cpuWord   = "cpu"
)

// serverProc is a dev server running as a child process.
type serverProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     *bufio.Reader
	addr    string
	ns      string
	mu      sync.Mutex // one cpu question at a time
	waiting bool       // a goroutine waits for the child; done closes when it has exited
	done    chan struct{}
	waited  error
}

// startServerProc starts the child and waits (at most two minutes) for its address.
func startServerProc(untuned bool) (*serverProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-devserver-child", "-untuned="+strconv.FormatBool(untuned))
	cmd.SysProcAttr = harness.ChildAttr()
	stdin, out, err := startChild(cmd)
	if err != nil {
		return nil, err
	}
	p := &serverProc{cmd: cmd, stdin: stdin, out: out, done: make(chan struct{})}
	type ready struct {
		addr, ns string
		err      error
	}
	got := make(chan ready, 1)
	go func() {
		addr, ns, err := readReady(p.out)
		got <- ready{addr, ns, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			p.kill()
			return nil, fmt.Errorf("dev server process: %w", r.err)
		}
		p.addr, p.ns = r.addr, r.ns
	case <-time.After(2 * time.Minute):
		p.kill()
		return nil, errors.New("dev server process: no address after 2 minutes")
	}
	p.waiting = true
	go func() { p.waited = cmd.Wait(); close(p.done) }()
	return p, nil
}

// readReady reads the child's stdout up to its ready line; any other line before it is
// passed on to stderr (the server's log goes to stderr, but a stray print must not be
// taken for the address).
func readReady(r *bufio.Reader) (addr, ns string, err error) {
	for {
		line, err := r.ReadString('\n')
		if a, n, ok := parseReady(line); ok {
			return a, n, nil
		}
		if err != nil {
			return "", "", fmt.Errorf("exited before it said %s (%v)", readyWord, err)
		}
		fmt.Fprint(os.Stderr, line)
	}
}

// parseReady takes "devserver-ready HOST:PORT NAMESPACE".
func parseReady(line string) (addr, ns string, ok bool) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != readyWord {
		return "", "", false
	}
	if _, port, err := net.SplitHostPort(f[1]); err != nil || port == "" {
		return "", "", false
	}
	return f[1], f[2], true
}

// parseCPU takes "cpu NANOSECONDS".
func parseCPU(line string) (time.Duration, bool) {
	f := strings.Fields(line)
	if len(f) != 2 || f[0] != cpuWord {
		return 0, false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n), true
}

// cpu asks the child for the CPU time it has used; 0 when it cannot answer.
func (p *serverProc) cpu() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := fmt.Fprintln(p.stdin, cpuWord); err != nil {
		return 0
	}
	for {
		line, err := p.out.ReadString('\n')
		if d, ok := parseCPU(line); ok {
			return d
		}
		if err != nil {
			return 0
		}
	}
}

// stop closes the child's stdin, so it stops its server and removes its database, and
// waits a minute for that before killing it.
func (p *serverProc) stop() error {
	_ = p.stdin.Close()
	select {
	case <-p.done:
		if p.waited != nil {
			return fmt.Errorf("dev server process: %v", p.waited)
		}
		return nil
	case <-time.After(time.Minute):
		p.kill()
		return errors.New("dev server process still running a minute after its stdin closed; killed")
	}
}

// kill ends the child and reaps it.
func (p *serverProc) kill() {
	_ = p.cmd.Process.Kill()
	if p.waiting {
		<-p.done
		return
	}
	_ = p.cmd.Wait()
}

// devserverChild is the -devserver-child mode.
func devserverChild(untuned bool) error {
	srv, err := devserver.Start(devserver.Options{Dynamic: dynamicConfig(untuned)})
	if err != nil {
		return err
	}
	defer srv.Stop()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, readyWord, srv.Addr(), srv.Namespace())
	if err := out.Flush(); err != nil {
		return err
	}
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			if strings.TrimSpace(in.Text()) == cpuWord {
				fmt.Fprintln(out, cpuWord, int64(selfCPU()))
				_ = out.Flush()
			}
		}
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	return nil
}

// startChild starts cmd, one of this program's own child modes, with its stderr shared and
// its stdin and stdout piped: the child says it is ready on stdout and stops when its stdin
// closes.
func startChild(cmd *exec.Cmd) (io.WriteCloser, *bufio.Reader, error) {
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return stdin, bufio.NewReader(stdout), nil
}
