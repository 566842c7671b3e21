package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/wendflow/wend/api/client"
)

// Errors of the unix socket.
var (
	// ErrSocketBusy is returned by ListenUnix when a live process already answers on the path.
	ErrSocketBusy = errors.New("another process serves this socket")
)

// UnixServer serves a handler on a unix socket until Close.
type UnixServer struct {
	h      http.Handler
	path   string
	ln     net.Listener
	srv    *http.Server
	info   os.FileInfo // the socket file we made; Close removes only that one
	cancel context.CancelFunc
	done   chan struct{}
}

// ListenUnix serves h on a unix socket at path, for the serving user only: the file is 0600,
// and where the kernel names a peer, another user's connection is refused (peer.go). A
// socket file left by a dead process is removed first, but only when connecting to it
// fails; a path that is not a socket, or a socket a live process answers on, is an error.
func ListenUnix(path string, h http.Handler) (*UnixServer, error) {
	if err := removeStale(path); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln, err := net.Listen("unix", client.SocketAddr(path))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // Close removes the file itself, if it is still ours
	ln = ownerOnly{Listener: ln, allow: servingUser}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Requests derive their context from base, so Close ends long polls at once instead of
	// waiting out their timeouts.
	base, cancel := context.WithCancel(context.Background())
	u := &UnixServer{h: h, path: path, ln: ln, info: info, cancel: cancel, done: make(chan struct{}),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
			BaseContext: func(net.Listener) context.Context { return base }}}
	go func() {
		defer close(u.done)
		_ = u.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return u, nil
}

// Handler is the handler the socket serves (a *Server when made by wend).
func (u *UnixServer) Handler() http.Handler { return u.h }

// Path returns the socket's path.
func (u *UnixServer) Path() string { return u.path }

// Close stops accepting, ends requests in flight (long polls answer at once), and removes
// the socket file unless another process has replaced it meanwhile.
func (u *UnixServer) Close() error {
	u.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := u.srv.Shutdown(ctx)
	<-u.done
	if now, serr := os.Lstat(u.path); serr == nil && os.SameFile(now, u.info) {
		if rerr := os.Remove(u.path); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("close socket %s: %w", u.path, err)
	}
	return nil
}

// removeStale removes a socket file nobody answers on.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket; remove it if it is not needed", path)
	}
	c, err := net.DialTimeout("unix", client.SocketAddr(path), time.Second)
	if err == nil {
		c.Close()
		return ErrSocketBusy
	}
	if !refused(err) && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("probe existing socket: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	return nil
}
