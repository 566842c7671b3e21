package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Errors of the TCP listener.
var (
	// ErrRemoteNeedsToken is returned by ListenTCP for a non-loopback address without
	// AllowRemote and a token: a bearer token is the only thing guarding such a listener.
	ErrRemoteNeedsToken = errors.New("not a loopback address")
)

// Timeouts of the TCP listener. The write timeout must outlast the longest answer the API
// gives on purpose, a wait's long poll (MaxWait); the others bound what a slow or idle
// client can hold.
const (
	tcpReadHeaderTimeout = 10 * time.Second
	tcpReadTimeout       = 30 * time.Second
	tcpWriteTimeout      = MaxWait + 30*time.Second
	tcpIdleTimeout       = 2 * time.Minute
	tcpMaxHeaderBytes    = 64 << 10
)

// TCPOptions configure ListenTCP.
type TCPOptions struct {
	Addr string // host:port; port 0 picks a free one (see TCPServer.Addr)
	// Token is the act token (and the secret the UI's act session and CSRF values derive
	// from). Required: it may do everything.
	Token string
	// ReadToken is the read token: every route that returns data, none that acts. Optional
	// (then only Token reads); it must differ from Token.
	ReadToken string
	// OpenReads lets a request without a token read, on a loopback address only.
	OpenReads bool
	// AllowRemote permits a non-loopback address; every request then needs a token.
	AllowRemote bool
	// Metrics, when set, is served at GET /metrics (package server/metrics makes it).
	Metrics http.Handler
	// UI, when set, serves the web UI and every other path, which it hands to the Server it
	// was made over (package server/web makes it; give it the same Server); without it the
	// listener serves the API alone.
	UI UI
}

// TCPServer serves the API (with the web UI and /metrics when given) over TCP until Close.
type TCPServer struct {
	s      *Server
	routes Routed
	ln     net.Listener
	srv    *http.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// ListenTCP serves s (the /v1 API), opts.UI and opts.Metrics when set, on opts.Addr behind
// the guard (auth.go): the act token on every mutation, a token on every route that returns
// data, and off loopback on every request. A non-loopback address needs AllowRemote.
func ListenTCP(s *Server, opts TCPOptions) (*TCPServer, error) {
	if opts.Token == "" {
		return nil, fmt.Errorf("listen on %s: a token is required", opts.Addr)
	}
	loopback, err := isLoopbackAddr(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	if !loopback && !opts.AllowRemote {
		return nil, fmt.Errorf("listen on %s: %w; binding elsewhere needs --allow-remote and a token (--token-file or WEND_TOKEN)", opts.Addr, ErrRemoteNeedsToken)
	}
	if err := CheckToken(opts.Token); !loopback && err != nil { // then the token is all that guards it
		return nil, fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	if opts.ReadToken != "" {
		if err := CheckToken(opts.ReadToken); err != nil {
			return nil, fmt.Errorf("listen on %s: the read token: %w", opts.Addr, err)
		}
		if secretEqual(opts.ReadToken, opts.Token) {
			return nil, fmt.Errorf("listen on %s: the read token is the act token; give each its own", opts.Addr)
		}
	}
	if opts.OpenReads && !loopback {
		return nil, fmt.Errorf("listen on %s: --open-reads is for a loopback address only; off loopback every request needs a token", opts.Addr)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	var h http.Handler = s
	if opts.UI != nil {
		h = opts.UI
	}
	if opts.Metrics != nil {
		m := NewRouter()
		m.Handle("GET /metrics", AccessOpen, opts.Metrics)
		m.Inner(asRouted(h))
		h = m
	}
	g := newGuard(guardConfig{act: opts.Token, read: opts.ReadToken, loopback: loopback, openReads: opts.OpenReads}, opts.UI, h)
	base, cancel := context.WithCancel(context.Background())
	t := &TCPServer{s: s, ln: ln, routes: g.next, cancel: cancel, done: make(chan struct{}), srv: &http.Server{
		Handler:           g,
		ReadHeaderTimeout: tcpReadHeaderTimeout,
		ReadTimeout:       tcpReadTimeout,
		WriteTimeout:      tcpWriteTimeout,
		IdleTimeout:       tcpIdleTimeout,
		MaxHeaderBytes:    tcpMaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
	}}
	go func() {
		defer close(t.done)
		_ = t.srv.Serve(ln) // http.ErrServerClosed after Close
	}()
	return t, nil
}

// Server is the Server this listener serves (to register workflows on, say).
func (t *TCPServer) Server() *Server { return t.s }

// Routes lists every route the listener serves, with the access each needs.
func (t *TCPServer) Routes() []Route { return t.routes.Routes() }

// Addr is the address the server listens on, with the port chosen when the asked one was 0.
func (t *TCPServer) Addr() string { return t.ln.Addr().String() }

// URL is the base URL of the server, e.g. http://127.0.0.1:8080.
func (t *TCPServer) URL() string { return "http://" + t.Addr() }

// Close stops accepting and ends requests in flight (long polls answer at once).
func (t *TCPServer) Close() error {
	t.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := t.srv.Shutdown(ctx)
	<-t.done
	if err != nil {
		return fmt.Errorf("close %s: %w", t.Addr(), err)
	}
	return nil
}

// isLoopbackAddr says whether host:port names only loopback interfaces. An empty host (all
// interfaces) is not loopback; "localhost" is, as the resolver may not be trusted to say
// otherwise only for it.
func isLoopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false, nil // a name other than localhost: treat as remote
	}
	return ip.IsLoopback(), nil
}
