//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/temporal/e2e/devserver"
)

var update = flag.Bool("update", false, "record the golden Temporal histories in testdata/golden")

// env is what TestMain builds and starts once for every test.
var env struct {
	dir          string // scratch folder of this test binary
	wend         string // the main module's wend binary (local runs)
	wendTemporal string // wend-temporal (runs on Temporal)
	worker       string // cacheless: wend worker with the sticky cache off
	workerFaults string // cacheless built with -tags faults: WEND_FAILPOINTS kills it
	devServer    string // wend-temporal-dev, for the test that kills the server
	examples     string // a copy of examples/ with the Go plugin built in it
	demo         string // the built example Go plugin
	addr         string // the embedded server's frontend
	orderAPI     string // the order service examples/fetch-order.wend.yaml calls
}

// orderToken is the API_TOKEN every wend and worker of the tests inherits, as the order
// service wants it.
const orderToken = "parity-order-token"

// orderService answers GET /orders/ID with {"id": ID, "status": "shipped"} to a request with
// the bearer token, 401 to any other. No Date header: the response is the same on both engines.
func orderService() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		id, ok := strings.CutPrefix(r.URL.Path, "/orders/")
		if !ok || r.Header.Get("Authorization") != "Bearer "+orderToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id, "status": "shipped"})
	}))
}

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		code = 1
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "wend-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	env.dir = dir
	repo, err := filepath.Abs("../..")
	if err != nil {
		return 0, err
	}
	bin := filepath.Join(dir, "bin")
	env.wend, env.wendTemporal, env.worker = filepath.Join(bin, "wend"), filepath.Join(bin, "wend-temporal"), filepath.Join(bin, "cacheless")
	env.devServer = filepath.Join(bin, "wend-temporal-dev")
	env.workerFaults = filepath.Join(bin, "cacheless-faults")
	env.examples = filepath.Join(dir, "examples")
	env.demo = filepath.Join(env.examples, "plugins", "demo", "demo")
	// Each binary is built in its own module, so each module's go.sum is what counts.
	for _, b := range []struct{ dir, out, pkg, tags string }{
		{repo, env.wend, "./cmd/wend", ""},
		{repo, env.demo, "./examples/plugins/demo", ""},
		{filepath.Join(repo, "temporal"), env.wendTemporal, "./cmd/wend-temporal", ""},
		{filepath.Join(repo, "temporal", "e2e"), env.worker, "./internal/cacheless", ""},
		{filepath.Join(repo, "temporal", "e2e"), env.workerFaults, "./internal/cacheless", "faults"},
		{filepath.Join(repo, "temporal", "e2e"), env.devServer, "./cmd/wend-temporal-dev", ""},
	} {
		cmd := exec.Command("go", "build", "-tags", b.tags, "-o", b.out, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build %s in %s: %v\n%s", b.pkg, b.dir, err, out)
		}
	}
	if err := copyExamples(filepath.Join(repo, "examples"), env.examples); err != nil {
		return 0, err
	}
	orders := orderService()
	defer orders.Close()
	env.orderAPI = orders.URL
	if err := os.Setenv("API_TOKEN", orderToken); err != nil {
		return 0, err
	}
	srv, err := devserver.Start(devserver.Options{DBFile: filepath.Join(dir, "temporal.db")})
	if err != nil {
		return 0, err
	}
	defer srv.Stop()
	env.addr = srv.Addr()
	return m.Run(), nil
}

// copyExamples copies the workflow files (top level and failures/) and links the Python and
// Node.js plugins, so the files' relative plugin paths resolve in the copy and the source
// tree gets no built binary.
func copyExamples(src, dst string) error {
	for _, sub := range []string{"", "failures"} {
		if err := os.MkdirAll(filepath.Join(dst, sub), 0o755); err != nil {
			return err
		}
		files, err := filepath.Glob(filepath.Join(src, sub, "*.wend.yaml"))
		if err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dst, sub, filepath.Base(f)), b, 0o644); err != nil {
				return err
			}
		}
	}
	for _, p := range []string{"python", "node"} {
		if err := os.Symlink(filepath.Join(src, "plugins", p), filepath.Join(dst, "plugins", p)); err != nil {
			return err
		}
	}
	return nil
}

// proc is a started worker.
type proc struct {
	cmd    *exec.Cmd
	done   chan struct{}
	stderr *bytes.Buffer
}

// startWorker starts the cacheless worker on queue with state folder state, in its own
// process group, and waits until it polls.
func startWorker(t *testing.T, queue, state string) *proc {
	t.Helper()
	return startWorkerAt(t, env.addr, queue, state)
}

func startWorkerAt(t *testing.T, addr, queue, state string) *proc {
	t.Helper()
	return startProc(t, "cacheless: ready", env.worker, "--temporal", addr, "--task-queue", queue, "--state", state)
}

// startFaultWorker starts the faults build of the cacheless worker, which exits 137 at the
// nth pass through failpoint point (WEND_FAILPOINTS). It does not wait for the worker to be
// ready: a task may reach the failpoint before the worker says so. Its output may be read
// once it has exited (done).
func startFaultWorker(t *testing.T, queue, state, point string, n int) *proc {
	t.Helper()
	return startProcEnv(t, "", []string{fmt.Sprintf("WEND_FAILPOINTS=%s=%d", point, n)},
		env.workerFaults, "--temporal", env.addr, "--task-queue", queue, "--state", state)
}

// startProc starts bin in its own process group and waits until its stderr or stdout says
// ready.
func startProc(t *testing.T, ready string, bin string, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, ready, nil, bin, args...)
}

// startProcEnv is startProc with extra environment variables; ready "" waits for nothing.
func startProcEnv(t *testing.T, ready string, extra []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if extra != nil {
		cmd.Env = append(os.Environ(), extra...)
	}
	if ready == "" {
		var buf bytes.Buffer
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stderr, cmd.Stdout = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := &proc{cmd: cmd, done: make(chan struct{}), stderr: &buf}
		go func() { _ = cmd.Wait(); close(p.done) }()
		return p
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	var buf bytes.Buffer
	out := io.MultiWriter(pw, &buf)
	cmd.Stderr, cmd.Stdout = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), stderr: &buf}
	go func() { _ = cmd.Wait(); pw.Close(); close(p.done) }()
	seen := make(chan bool, 1)
	go func() {
		b := make([]byte, 4096)
		var got strings.Builder
		for {
			n, err := pr.Read(b)
			got.Write(b[:n])
			if strings.Contains(got.String(), ready) {
				seen <- true
				_, _ = io.Copy(io.Discard, pr)
				return
			}
			if err != nil {
				seen <- false
				return
			}
		}
	}()
	select {
	case ok := <-seen:
		if !ok {
			t.Fatalf("%s exited before it was ready:\n%s", filepath.Base(bin), buf.String())
		}
	case <-time.After(time.Minute):
		p.kill()
		t.Fatalf("%s not ready after a minute:\n%s", filepath.Base(bin), buf.String())
	}
	return p
}

// kill SIGKILLs the worker (not its plugins: they must go by themselves or be reaped).
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop stops the worker as an operator would (SIGTERM) and waits.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		p.kill()
		t.Errorf("worker did not stop within a minute of SIGTERM")
	}
}

// result is one CLI invocation.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs bin with args and a deadline, failing the test when it cannot run or hangs.
func cli(t *testing.T, timeout time.Duration, bin string, args ...string) result {
	t.Helper()
	r, err := runCLI(timeout, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runCLI is cli for goroutines other than the test's, which must not call t.Fatal.
func runCLI(timeout time.Duration, bin string, args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = env.examples
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return result{}, fmt.Errorf("%s %s: no exit within %v\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), timeout, errb.String())
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return result{}, fmt.Errorf("%s: %v", bin, err)
		}
		code = ee.ExitCode()
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}, nil
}
