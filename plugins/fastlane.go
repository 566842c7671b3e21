package plugins

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wendflow/wend/sdk/go/fastlane"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// fastOffer is a plugin's fast lane (package fastlane), agreed on by probeLanes: the socket to
// dial for each new lane and the token to send on it first.
type fastOffer struct {
	addr  string
	token []byte
}

// wantFastLane reports whether the probe should ask for a fast lane: the host's environment
// leaves it on and the plugin is reached over a unix socket on this machine.
func (p *process) wantFastLane() bool {
	if !fastlane.Enabled() {
		return false
	}
	addr, err := p.client.Start() // the handshake's address, already known
	return err == nil && addr != nil && addr.Network() == "unix"
}

// acceptFastLane reads the plugin's offer from the probe's header and checks it by opening the
// first lane, kept for the first call. No offer (other SDKs, older Go SDKs, a plugin that turned
// it off) means gRPC lanes without a note; an offer that does not work, gRPC lanes with one.
func (p *process) acceptFastLane(s grpc.ClientStream, timeout time.Duration) (note string) {
	md, err := s.Header()
	if err != nil || len(md.Get(fastlane.AddrKey)) == 0 {
		return ""
	}
	o, err := parseOffer(md)
	if err == nil {
		var fs *fastStream
		if fs, err = dialFast(o, timeout, true); err == nil {
			p.lanes.fast = o
			p.lanes.put(fs.tryStream())
			return ""
		}
	}
	return "wend: the plugin offered a fast lane that did not work (" + err.Error() + "); using gRPC lanes (" + fastlane.EnvVar + "=0 stops asking)"
}

func parseOffer(md metadata.MD) (*fastOffer, error) {
	addr, hexToken := md.Get(fastlane.AddrKey), md.Get(fastlane.TokenKey)
	if len(addr) != 1 || len(hexToken) != 1 || !filepath.IsAbs(addr[0]) {
		return nil, fmt.Errorf("want one absolute %s and one %s, got %q and %d", fastlane.AddrKey, fastlane.TokenKey, addr, len(hexToken))
	}
	token, err := hex.DecodeString(hexToken[0])
	if err != nil || len(token) != fastlane.TokenBytes {
		return nil, fmt.Errorf("%s is not %d bytes of hex", fastlane.TokenKey, fastlane.TokenBytes)
	}
	return &fastOffer{addr: addr[0], token: token}, nil
}

// removeDir removes a killed plugin's socket and its directory (a plugin that exits
// normally removes them itself); only a directory named as the SDK names it, and only if empty.
func (o *fastOffer) removeDir() {
	dir := filepath.Dir(o.addr)
	if !strings.HasPrefix(filepath.Base(dir), fastlane.DirPrefix) {
		return
	}
	_ = os.Remove(o.addr)
	_ = os.Remove(dir)
}

// fastStream is the host's end of one fast lane. The goroutine that calls Send or Recv writes or
// reads the socket itself; nothing runs between the two processes but the kernel.
type fastStream struct {
	c     net.Conn
	r     *fastlane.Reader
	w     *fastlane.Writer
	acked bool // the plugin's acknowledgement of the token has been read
}

// dialFast opens a fast lane and sends the token. Only the probe waits for the plugin's
// acknowledgement (within timeout), so that a refused token fails there; a lane opened for a
// try reads it with the try's first event, so a plugin that does not answer is stopped as a
// try is, by its deadline or its caller. Connecting to a listening unix socket does not wait
// for the plugin.
func dialFast(o *fastOffer, timeout time.Duration, wait bool) (*fastStream, error) {
	c, err := net.DialTimeout("unix", o.addr, timeout)
	if err != nil {
		return nil, err
	}
	fs := &fastStream{c: c, r: fastlane.NewReader(c, fastlane.MaxFrame), w: fastlane.NewWriter(c, fastlane.MaxFrame)}
	if err := fs.w.WriteRaw(o.token); err != nil {
		c.Close()
		return nil, err
	}
	if !wait {
		return fs, nil
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	if err := fs.readAck(); err != nil {
		c.Close()
		if errors.Is(err, io.EOF) {
			err = errors.New("the plugin closed the connection: token refused")
		}
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return fs, nil
}

// readAck reads the plugin's empty frame that accepts the token.
func (fs *fastStream) readAck() error {
	b, err := fs.r.Next()
	if err != nil {
		return err
	}
	if len(b) != 0 {
		return fmt.Errorf("fast lane: %w: a %d-byte acknowledgement, want an empty frame", fastlane.ErrBadFrame, len(b))
	}
	fs.acked = true
	return nil
}

func (fs *fastStream) tryStream() *tryStream {
	return &tryStream{stream: fs, cancel: func() { _ = fs.c.Close() }}
}

func (fs *fastStream) Send(in *pluginv1.ExecuteInput) error {
	if err := fs.w.Write(in); err != nil {
		return fastLaneError(err)
	}
	return nil
}

func (fs *fastStream) Recv() (*pluginv1.ExecuteEvent, error) {
	if !fs.acked {
		if err := fs.readAck(); err != nil {
			return nil, fastLaneError(err)
		}
	}
	ev := new(pluginv1.ExecuteEvent)
	if err := fs.r.Read(ev); err != nil {
		return nil, fastLaneError(err)
	}
	return ev, nil
}

// fastLaneError gives a fast lane's failure the gRPC status a gRPC lane would have failed
// with, so that a try fails (and is retried) the same way on either: a frame over the limit is
// ResourceExhausted, an undecodable one Internal, a broken or closed connection Unavailable.
func fastLaneError(err error) error {
	switch {
	case errors.Is(err, fastlane.ErrTooLarge):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, fastlane.ErrBadFrame):
		return status.Error(codes.Internal, err.Error())
	default:
		return status.Error(codes.Unavailable, "fast lane: "+err.Error())
	}
}

// openFast opens a new fast lane, or returns nil for a gRPC lane: the process has none, or
// opening one failed (once, with a note in the log; the process keeps to gRPC lanes after).
func (p *process) openFast() *tryStream {
	o := p.lanes.fast
	if o == nil || p.lanes.fastBroken.Load() {
		return nil
	}
	fs, err := dialFast(o, p.startTimeout, false)
	if err != nil {
		if !p.lanes.fastBroken.Swap(true) {
			p.stderr.log(p.name, "wend: could not open a fast lane ("+err.Error()+"); using gRPC lanes")
		}
		return nil
	}
	return fs.tryStream()
}
