package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/api/client"
	"github.com/wendflow/wend/history"
)

func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return client.DialUnix(ctx, path)
	}}}
}

func getHealth(t *testing.T, path string) string {
	t.Helper()
	c := unixClient(path)
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://wend/v1/health")
	if err != nil {
		t.Fatalf("health over %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestListenUnix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db.sock")
	u, err := ListenUnix(path, New(nil, history.NewMemStore()))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket file: %v %v", fi.Mode(), err)
	}
	if b := getHealth(t, path); !strings.Contains(b, `"status":"ok"`) {
		t.Fatalf("health: %s", b)
	}
	// A second server on a live socket is refused, and the live one keeps its file.
	if _, err := ListenUnix(path, http.NotFoundHandler()); !errors.Is(err, ErrSocketBusy) {
		t.Fatalf("second listen: %v", err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after Close: %v", err)
	}
}

func TestListenUnixStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db.sock")
	// A socket file nobody listens on, as a killed process leaves it.
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}
	u, err := ListenUnix(path, New(nil, history.NewMemStore()))
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	defer u.Close()
	getHealth(t, path)
}

func TestListenUnixNotASocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db.sock")
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ListenUnix(path, http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Fatalf("listen over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatal("the regular file was touched")
	}
}

// A long poll in flight does not hold Close up: requests share a context Close cancels.
func TestCloseEndsLongPolls(t *testing.T) {
	f := newFixture(t, history.NewMemStore())
	f.start("lp", `{"who":"x"}`)
	path := filepath.Join(t.TempDir(), "s.sock")
	u, err := ListenUnix(path, f.srv)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := unixClient(path).Get("http://wend/v1/runs/lp/wait?timeout=5m")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	f.waitFor("lp", waitingForSignal)
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
}

// Paths longer than sockaddr_un allows still work when a relative form fits.
func TestLongSocketPath(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(long)
	path := filepath.Join(long, "wend.db.sock")
	u, err := ListenUnix(path, New(nil, history.NewMemStore()))
	if err != nil {
		t.Fatalf("listen on a %d-byte path: %v", len(path), err)
	}
	defer u.Close()
	getHealth(t, path)
}
