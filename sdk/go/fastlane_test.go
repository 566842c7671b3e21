package sdk

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/sdk/go/fastlane"
	"github.com/wendflow/wend/sdk/go/lanetest"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// testLane is the host's end of a lane in these tests, on either transport.
type testLane interface {
	lanetest.Lane
	CloseSend() error
}

// transports opens lanes to acts over gRPC and over the fast lane, for tests that must hold on
// both.
var transports = []struct {
	name string
	open func(t *testing.T, acts Activities) func(ctx context.Context) testLane
}{
	{"grpc", func(t *testing.T, acts Activities) func(ctx context.Context) testLane {
		c := serve(t, acts)
		return func(ctx context.Context) testLane {
			s, err := c.Lane(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}},
	{"fast", func(t *testing.T, acts Activities) func(ctx context.Context) testLane {
		f := serveFastLane(t, acts)
		return func(ctx context.Context) testLane {
			c := dialFastLane(t, f.addr, f.token)
			context.AfterFunc(ctx, func() { c.c.Close() })
			return c
		}
	}},
}

// serveFastLane starts a fast lane for acts, as a host's probe would have it started.
func serveFastLane(t *testing.T, acts Activities) *fastLane {
	t.Helper()
	s := &server{acts: acts}
	if err := s.fast.listen(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.fast.close)
	return &s.fast
}

// fastClient is a host's end of a fast lane, without the host's error mapping.
type fastClient struct {
	c net.Conn
	r *fastlane.Reader
	w *fastlane.Writer
}

func dialFastLane(t *testing.T, addr string, token []byte) *fastClient {
	t.Helper()
	c, err := net.Dial("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fc := &fastClient{c: c, r: fastlane.NewReader(c, fastlane.MaxFrame), w: fastlane.NewWriter(c, fastlane.MaxFrame)}
	if err := fc.w.WriteRaw(token); err != nil {
		t.Fatal(err)
	}
	if ack, err := fc.r.Next(); err != nil || len(ack) != 0 {
		t.Fatalf("handshake: ack %q, %v", ack, err)
	}
	return fc
}

func (c *fastClient) Send(in *pluginv1.ExecuteInput) error { return c.w.Write(in) }
func (c *fastClient) CloseSend() error                     { return c.c.(*net.UnixConn).CloseWrite() }
func (c *fastClient) Recv() (*pluginv1.ExecuteEvent, error) {
	ev := new(pluginv1.ExecuteEvent)
	if err := c.r.Read(ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// The socket's directory is private, and closing removes it.
func TestFastLaneSocketDir(t *testing.T) {
	s := &server{acts: Activities{}}
	if err := s.fast.listen(s); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.fast.addr)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(dir), fastlane.DirPrefix) {
		t.Fatalf("socket dir %s has mode %v", dir, fi.Mode())
	}
	s.fast.close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after close: %v, want the directory gone", err)
	}
	if s.fast.once.Do(func() { t.Fatal("listened again after close") }); s.fast.err == nil {
		t.Fatal("no reason recorded for having no fast lane")
	}
}

// A connection is served only after the right token: a wrong one, one of the wrong length, or
// none within the time closes it unanswered, and the plugin serves the next connection.
func TestFastLaneToken(t *testing.T) {
	f := serveFastLane(t, Activities{"greet": Func(func(ctx *Context, in nameIn) (string, error) { return in.Name, nil }, "", "")})
	wrong := append([]byte(nil), f.token...)
	wrong[0] ^= 1
	for _, token := range [][]byte{wrong, f.token[:8], append(append([]byte(nil), f.token...), 0), nil} {
		c, err := net.Dial("unix", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		w := fastlane.NewWriter(c, fastlane.MaxFrame)
		if err := w.WriteRaw(token); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := fastlane.NewReader(c, fastlane.MaxFrame).Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("token %x: %v, want the connection closed", token, err)
		}
		c.Close()
	}
	c := dialFastLane(t, f.addr, f.token)
	lanetest.Request(t, c, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"x"}`)})
	if _, ev := lanetest.Final(t, c); string(ev.GetResult().GetOutput()) != `"x"` {
		t.Fatalf("after refused tokens: %v", ev)
	}
}

// A frame over the limit, or one that is not an ExecuteInput, ends the lane (the connection
// closes); the plugin keeps serving other lanes.
func TestFastLaneBadFrame(t *testing.T) {
	f := serveFastLane(t, Activities{"greet": Func(func(ctx *Context, in nameIn) (string, error) { return in.Name, nil }, "", "")})
	var over [4]byte
	binary.BigEndian.PutUint32(over[:], fastlane.MaxFrame+1)
	for name, frame := range map[string][]byte{
		"oversized":    over[:],
		"not protobuf": {0, 0, 0, 2, 0xff, 0xff},
	} {
		c := dialFastLane(t, f.addr, f.token)
		if _, err := c.c.Write(frame); err != nil {
			t.Fatal(err)
		}
		_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if ev, err := c.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: %v, %v; want the lane closed", name, ev, err)
		}
	}
	c := dialFastLane(t, f.addr, f.token)
	lanetest.Request(t, c, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"y"}`)})
	if _, ev := lanetest.Final(t, c); string(ev.GetResult().GetOutput()) != `"y"` {
		t.Fatalf("after bad frames: %v", ev)
	}
}
