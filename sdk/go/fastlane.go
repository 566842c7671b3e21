package sdk

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/wendflow/wend/sdk/go/fastlane"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// fastLane is the plugin's end of the fast lane (package fastlane): a unix socket in a private
// directory, made when a host first asks for it, and the token a connection must send first.
type fastLane struct {
	once  sync.Once
	err   error // why there is none
	dir   string
	addr  string
	token []byte
	ln    net.Listener
}

var errFastLaneClosed = errors.New("closed")

// handshakeTimeout bounds how long a new connection may take to send its token.
const handshakeTimeout = 10 * time.Second

// offerFastLane answers a host's request for a fast lane with the socket's address and token in
// the lane's header metadata. It offers none unless the host reached this plugin over a unix
// socket and neither side turned it off; the host then keeps to gRPC lanes.
func (s *server) offerFastLane(stream pluginv1.Activities_LaneServer) {
	ctx := stream.Context()
	if md, _ := metadata.FromIncomingContext(ctx); len(md.Get(fastlane.AskKey)) == 0 || !fastlane.Enabled() {
		return
	}
	if p, ok := peer.FromContext(ctx); !ok || p.Addr == nil || p.Addr.Network() != "unix" {
		return
	}
	f := &s.fast
	f.once.Do(func() {
		f.err = f.listen(s)
		if f.err != nil {
			fmt.Fprintf(os.Stderr, "wend plugin: no fast lane (%v); the host uses gRPC lanes\n", f.err)
		}
	})
	if f.err != nil {
		return
	}
	_ = stream.SendHeader(metadata.Pairs(fastlane.AddrKey, f.addr, fastlane.TokenKey, hex.EncodeToString(f.token)))
}

// listen makes the directory (0700, so only this user reaches the socket), the token and the
// socket, and starts accepting.
func (f *fastLane) listen(s *server) error {
	token := make([]byte, fastlane.TokenBytes)
	if _, err := rand.Read(token); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", fastlane.DirPrefix)
	if err != nil {
		return err
	}
	addr := filepath.Join(dir, fastlane.SocketName)
	ln, err := net.Listen("unix", addr)
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	f.dir, f.addr, f.token, f.ln = dir, addr, token, ln
	go f.accept(s)
	return nil
}

func (f *fastLane) accept(s *server) {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			// Closing the listener also removes the socket, so the host's next dial fails at
			// once and it keeps to gRPC lanes, instead of waiting on a socket nobody accepts.
			if !errors.Is(err, net.ErrClosed) {
				fmt.Fprintf(os.Stderr, "wend plugin: the fast lane stopped accepting (%v); new lanes use gRPC\n", err)
				_ = f.ln.Close()
			}
			return
		}
		go s.serveFast(c, f.token)
	}
}

// close removes the socket and its directory; no fast lane is offered after it.
func (f *fastLane) close() {
	f.once.Do(func() { f.err = errFastLaneClosed })
	if f.ln != nil {
		_ = f.ln.Close()
		_ = os.RemoveAll(f.dir)
	}
}

// serveFast runs a lane on one connection once it has sent the token, and acknowledges that
// with an empty frame. A wrong or late token closes the connection unanswered.
func (s *server) serveFast(c net.Conn, token []byte) {
	defer c.Close()
	r := fastlane.NewReader(c, fastlane.TokenBytes)
	_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	got, err := r.Next()
	if err != nil || subtle.ConstantTimeCompare(got, token) != 1 {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	r.SetMax(fastlane.MaxFrame)
	w := fastlane.NewWriter(c, fastlane.MaxFrame)
	if w.WriteRaw(nil) != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = s.runLane(&fastConn{ctx: ctx, r: r, w: w})
	if errors.Is(err, fastlane.ErrTooLarge) || errors.Is(err, fastlane.ErrBadFrame) {
		fmt.Fprintf(os.Stderr, "wend plugin: closed a fast lane: %v\n", err)
	}
}

// fastConn is a lane's stream on a fast-lane connection: the goroutine that calls Recv or Send
// reads or writes the socket itself.
type fastConn struct {
	ctx context.Context
	r   *fastlane.Reader
	w   *fastlane.Writer
}

func (c *fastConn) Recv() (*pluginv1.ExecuteInput, error) {
	in := new(pluginv1.ExecuteInput)
	if err := c.r.Read(in); err != nil {
		return nil, err
	}
	return in, nil
}

func (c *fastConn) Send(ev *pluginv1.ExecuteEvent) error { return c.w.Write(ev) }
func (c *fastConn) Context() context.Context             { return c.ctx }
