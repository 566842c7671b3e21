package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// e2eToken and e2eReadToken are the act and read tokens the end-to-end tests give wend
// serve through WEND_TOKEN and WEND_READ_TOKEN.
const (
	e2eToken     = "e2e-token-0123456789abcdef0123"
	e2eReadToken = "e2e-read-token-0123456789abcdef"
)

// liveServe is a real `wend serve` process: the binary built by go build, a database in a
// temporary folder, the example Go plugin beside the workflows.
type liveServe struct {
	t    *testing.T
	dir  string
	base string // http://127.0.0.1:PORT
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

// buildWend builds the wend binary into a temporary folder.
func buildWend(t *testing.T) string {
	t.Helper()
	return buildOnce(t, "wend", "./cmd/wend")
}

var webURLLine = regexp.MustCompile(`wend: web UI at (http://\S+)/ui/runs`)

// startServe starts wend serve on a free loopback port with workflows (name -> text) written
// beside the demo plugin, and stops it (Ctrl-C, then kill) when the test ends.
func startServe(t *testing.T, workflows map[string]string) *liveServe {
	t.Helper()
	wend, demo := buildWend(t), buildDemo(t)
	dir := t.TempDir()
	if err := os.Symlink(demo, filepath.Join(dir, "demo")); err != nil {
		t.Fatal(err)
	}
	for name, src := range workflows {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(wend, "serve", "--listen", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEND_DB="+filepath.Join(dir, "db", "wend.db"), "WEND_TOKEN="+e2eToken, "WEND_READ_TOKEN="+e2eReadToken)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &liveServe{t: t, dir: dir, cmd: cmd, logs: &bytes.Buffer{}}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			s.logs.WriteString(line + "\n") // read only after Wait, below
			if m := webURLLine.FindStringSubmatch(line); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		close(found)
	}()
	t.Cleanup(s.stop)
	select {
	case u, ok := <-found:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("wend serve exited before listening:\n%s", s.logs)
		}
		s.base = u
	case <-time.After(30 * time.Second):
		t.Fatalf("wend serve did not print its URL in 30s")
	}
	return s
}

func (s *liveServe) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// api calls the /v1 API with the token and decodes the answer into out.
func (s *liveServe) api(method, path string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode
}

// start begins a run of workflow file name under id through the API.
func (s *liveServe) start(id, name, input string) {
	s.t.Helper()
	src, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		s.t.Fatal(err)
	}
	req := map[string]any{"id": id, "spec_file": filepath.Join(s.dir, name), "source": string(src)}
	if input != "" {
		req["input"] = json.RawMessage(input)
	}
	var out map[string]any
	if code := s.api("POST", "/v1/runs", req, &out); code != http.StatusCreated {
		s.t.Fatalf("start %s: %d %v", id, code, out)
	}
}

// waitStatus polls the API until the run of id has status (or the deadline passes).
func (s *liveServe) waitStatus(id, status string, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		var d struct {
			Run   struct{ Status string } `json:"run"`
			Waits []struct{ Kind string } `json:"waits"`
		}
		s.api("GET", "/v1/runs/"+id, nil, &d)
		last = d.Run.Status
		if last == status || (status == "waiting" && len(d.Waits) > 0 && d.Waits[0].Kind == "signal") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("run %s is %s after %s, want %s", id, last, within, status)
}

func (s *liveServe) String() string { return fmt.Sprintf("wend serve at %s", s.base) }
