//go:build linux || darwin || freebsd

package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/api/client"
	"github.com/wendflow/wend/history"
)

// A peer the socket does not allow gets 403 naming both users and nothing of the API; the
// allowed one is served. The rule is injected, so this runs as any user.
func TestControlSocketRefusesAPeerNotAllowed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []int
	allow := true
	rule := func(uid int) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, uid)
		return allow
	}
	srv := &http.Server{Handler: New(nil, history.NewMemStore())}
	go func() { _ = srv.Serve(ownerOnly{Listener: ln, allow: rule}) }()
	defer srv.Close()
	get := func() (int, string) {
		c := unixClient(path)
		defer c.CloseIdleConnections()
		resp, err := c.Get("http://wend/v1/runs")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != 200 || !strings.Contains(body, `"runs"`) {
		t.Fatalf("allowed peer: %d %s", code, body)
	}
	mu.Lock()
	allow = false
	mu.Unlock()
	code, body := get()
	want := fmt.Sprintf("this socket serves only the user running wend (uid %d); yours is %d", os.Getuid(), os.Getuid())
	if code != http.StatusForbidden || errorCode(body) != api.CodeForbidden || !strings.Contains(body, want) {
		t.Fatalf("refused peer: %d %s, want 403 with %q", code, body, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != os.Getuid() {
		t.Errorf("the rule was asked about %v, want this process's uid twice", asked)
	}
}

// peerDialEnv makes the test binary a client of the socket it names, as another user.
const peerDialEnv = "WEND_TEST_PEER_DIAL"

// TestControlSocketRefusesAnotherUser plays the other local user for real: as nobody, a
// connection to the control socket gets nothing, whether the file's mode stops it (0600:
// permission denied) or lets it through (0666, as in the moment between bind and chmod:
// the peer check answers 403).
func TestControlSocketRefusesAnotherUser(t *testing.T) {
	if sock := os.Getenv(peerDialEnv); sock != "" {
		dialAsClient(sock)
		return
	}
	if os.Getuid() != 0 {
		t.Skip("playing another user needs root, to start a process as nobody")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	dir, err := os.MkdirTemp("", "wend-peer-") // not t.TempDir: its parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // nobody may reach the socket; its mode decides
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client.test")
	copyFile(t, os.Args[0], bin)
	sock := filepath.Join(dir, "wend.db.sock")
	u, err := ListenUnix(sock, New(nil, history.NewMemStore()))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	asNobody := func() string {
		cmd := exec.Command(bin, "-test.run=^TestControlSocketRefusesAnotherUser$")
		cmd.Env = append(os.Environ(), peerDialEnv+"="+sock)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the client as nobody: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := asNobody(); !strings.Contains(out, "dial: ") || !strings.Contains(out, "permission denied") {
		t.Errorf("nobody on the 0600 socket: %s", out)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	if out := asNobody(); !strings.Contains(out, "status 403") || !strings.Contains(out, "serves only the user running wend") || strings.Contains(out, `"runs"`) {
		t.Errorf("nobody on a 0666 socket: %s", out)
	}
	if b := getHealth(t, sock); !strings.Contains(b, `"status":"ok"`) { // the owner still is served
		t.Errorf("owner: %s", b)
	}
}

// dialAsClient is the other user's side: one GET, its outcome on stdout.
func dialAsClient(sock string) {
	c, err := client.DialUnix(context.Background(), sock)
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	defer c.Close()
	fmt.Fprint(c, "GET /v1/runs HTTP/1.1\r\nHost: wend\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(c)
	status, _, _ := strings.Cut(string(b), "\r\n")
	fmt.Printf("status %s\n%s\n", strings.TrimPrefix(status, "HTTP/1.1 "), b)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
