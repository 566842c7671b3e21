package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wendflow/wend/sdk/go/fastlane"
	"github.com/wendflow/wend/sdk/go/lanetest"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

func idleLanes(t *testing.T, h *Host, plugin string) (on bool, idle int) {
	t.Helper()
	p, err := h.process(plugin)
	if err != nil {
		t.Fatal(err)
	}
	p.lanes.mu.Lock()
	defer p.lanes.mu.Unlock()
	return p.lanes.on, len(p.lanes.idle)
}

// usesFastLane reports whether the plugin's process runs its lanes on the fast lane.
func usesFastLane(t *testing.T, h *Host, plugin string) bool {
	t.Helper()
	p, err := h.process(plugin)
	if err != nil {
		t.Fatal(err)
	}
	return p.lanes.fast != nil && !p.lanes.fastBroken.Load()
}

// testLane is a lane a test opens itself, on the transport the process uses.
type testLane interface {
	lanetest.Lane
	CloseSend() error
}

type fastTestLane struct{ *fastStream }

func (l fastTestLane) CloseSend() error { return l.c.(*net.UnixConn).CloseWrite() }

// openLane opens a lane to p as the host would (a fast lane if p has one); cancelling ctx ends it.
func openLane(t *testing.T, p *process, ctx context.Context) testLane {
	t.Helper()
	if p.lanes.fast == nil {
		s, err := p.rpc.Lane(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fs, err := dialFast(p.lanes.fast, 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	context.AfterFunc(ctx, func() { fs.c.Close() })
	t.Cleanup(func() { fs.c.Close() })
	return fastTestLane{fs}
}

// laneEnded reports whether err is a lane's clean end: io.EOF on gRPC, the connection's end on
// a fast lane.
func laneEnded(err error) bool {
	return errors.Is(err, io.EOF) || (status.Code(err) == codes.Unavailable && strings.HasSuffix(status.Convert(err).Message(), ": EOF"))
}

// wantFastLane is which example configurations run on the fast lane.
func wantFastLane(cfg Config) bool { return cfg.Name == "go" }

// Every example plugin serves lanes: sequential calls share one stream, and a try that was
// stopped does not give its lane back (a Cancel may still be in flight on it).
func TestLanesReused(t *testing.T) {
	for _, cfg := range exampleConfigs(t) {
		t.Run(cfg.Name, func(t *testing.T) {
			t.Parallel()
			lanesReused(t, cfg)
		})
	}
}

func lanesReused(t *testing.T, cfg Config) {
	name := cfg.Name
	h, logs := newHost(t, Options{}, cfg)
	for i := range 5 {
		if _, err := h.Execute(context.Background(), call(name, "greet", map[string]string{"name": "x"}), nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if on, idle := idleLanes(t, h, name); !on || idle != 1 {
		t.Fatalf("after 5 sequential calls: lanes on=%v idle=%d, want on and 1 (%s)", on, idle, logs)
	}
	if fast := usesFastLane(t, h, name); fast != wantFastLane(cfg) {
		t.Fatalf("fast lane %v, want %v (%s)", fast, wantFastLane(cfg), logs)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("stop")) })
	_, err := h.Execute(ctx, call(name, "sleep", map[string]int{"ms": 10000}), nil)
	if ae := activityError(t, err); ae.Type != TypeCancelled {
		t.Fatalf("got %v", ae)
	}
	if _, idle := idleLanes(t, h, name); idle != 0 {
		t.Fatalf("a cancelled try's lane went back to the pool (idle=%d)", idle)
	}
	if _, err := h.Execute(context.Background(), call(name, "greet", map[string]string{"name": "y"}), nil); err != nil {
		t.Fatal(err)
	}
	if _, idle := idleLanes(t, h, name); idle != 1 {
		t.Fatalf("idle=%d after a call on a new lane, want 1", idle)
	}

	// A plugin error is the plugin's own answer: the lane stays usable.
	_, err = h.Execute(context.Background(), call(name, "fail", map[string]any{"type": "Boom", "message": "no"}), nil)
	if ae := activityError(t, err); ae.Type != "Boom" {
		t.Fatalf("got %v", ae)
	}
	if _, idle := idleLanes(t, h, name); idle != 1 {
		t.Fatalf("idle=%d after a plugin error, want 1", idle)
	}
	if strings.Contains(logs.String(), "Lane") {
		t.Fatalf("probe logged: %s", logs)
	}
}

// laneRequest sends a request with a try identity, as the host would.
func laneRequest(t *testing.T, s lanetest.Lane, activity, input string) {
	t.Helper()
	lanetest.Request(t, s, &pluginv1.ExecuteRequest{
		Activity: activity, Input: []byte(input), ActivityExecutionId: "exec-1", ActivityAttemptId: "attempt-1", Attempt: 1,
	})
}

// The Lane protocol as the proto states it, spoken to every example plugin directly: tries one
// after another on one stream, a cancel for the try in flight, a cancel while idle ignored, a
// clean end when the host closes its send side (cancelling a try still in flight).
func TestLaneProtocol(t *testing.T) {
	for _, cfg := range exampleConfigs(t) {
		t.Run(cfg.Name, func(t *testing.T) {
			t.Parallel()
			h, logs := newHost(t, Options{}, cfg)
			defer func() {
				if t.Failed() {
					t.Logf("plugin log:\n%s", logs)
				}
			}()
			p, err := h.process(cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			s := openLane(t, p, t.Context())
			fast := p.lanes.fast != nil
			if fast != wantFastLane(cfg) {
				t.Fatalf("fast lane %v, want %v", fast, wantFastLane(cfg))
			}

			for _, who := range []string{"ada", "grace", "alan"} {
				laneRequest(t, s, "greet", `{"name":"`+who+`"}`)
				if _, ev := lanetest.Final(t, s); !jsonEqual(t, ev.GetResult().GetOutput(), `{"greeting":"hello, `+who+`"}`) {
					t.Fatalf("greet %s: %v", who, ev)
				}
			}

			laneRequest(t, s, "sleep", `{"ms":10000}`)
			time.Sleep(150 * time.Millisecond)
			lanetest.Cancel(t, s)
			start := time.Now()
			if _, ev := lanetest.Final(t, s); ev.GetError().GetType() != TypeCancelled {
				t.Fatalf("cancelled try ended with %v, want a %s error", ev, TypeCancelled)
			}
			if d := time.Since(start); d > slack(time.Second) {
				t.Fatalf("the cancelled try took %s to end", d)
			}

			// A stray cancel is ignored; the next tries run to their results.
			lanetest.Cancel(t, s)
			laneRequest(t, s, "sleep", `{"ms":250}`)
			if hb, ev := lanetest.Final(t, s); hb == 0 || ev.GetResult() == nil {
				t.Fatalf("try after a stray cancel: %d heartbeats, %v; want some and a result", hb, ev)
			}
			laneRequest(t, s, "fail", `{"type":"Boom","message":"no","non_retryable":true}`)
			if _, ev := lanetest.Final(t, s); ev.GetError().GetType() != "Boom" || !ev.GetError().GetNonRetryable() {
				t.Fatalf("fail: %v", ev)
			}
			laneRequest(t, s, "nosuch", `{}`)
			if _, ev := lanetest.Final(t, s); ev.GetError().GetType() != "UnknownActivity" {
				t.Fatalf("unknown activity: %v", ev)
			}
			laneRequest(t, s, "echo", `[1,"two"]`)
			if hb, ev := lanetest.Final(t, s); hb != 0 || !jsonEqual(t, ev.GetResult().GetOutput(), `[1,"two"]`) {
				t.Fatalf("echo: %d heartbeats, %v", hb, ev)
			}

			// Closing the send side with a try in flight: the try is cancelled, sends its final
			// event, and the lane ends cleanly.
			laneRequest(t, s, "sleep", `{"ms":10000}`)
			time.Sleep(150 * time.Millisecond)
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			if _, ev := lanetest.Final(t, s); ev.GetError().GetType() != TypeCancelled {
				t.Fatalf("try in flight at CloseSend ended with %v, want a %s error", ev, TypeCancelled)
			}
			if _, err := s.Recv(); !laneEnded(err) {
				t.Fatalf("after CloseSend: %v, want the lane's end", err)
			}

			// A lane whose stream is cancelled mid-try ends; the plugin serves the next one.
			ctx, cancel := context.WithCancel(t.Context())
			s2 := openLane(t, p, ctx)
			laneRequest(t, s2, "sleep", `{"ms":10000}`)
			if ev, err := s2.Recv(); ev.GetHeartbeat() == nil {
				t.Fatalf("sleep sent %v, %v first, want a heartbeat", ev, err)
			}
			cancel()
			// A heartbeat already on its way when the stream was cancelled may still arrive
			// (a loaded machine delays the cancel); nothing but heartbeats may.
			ev, err := s2.Recv()
			for n := 0; err == nil && ev.GetHeartbeat() != nil && n < 100; n++ {
				ev, err = s2.Recv()
			}
			if status.Code(err) != codes.Canceled && !(fast && status.Code(err) == codes.Unavailable) {
				t.Fatalf("after cancelling the stream: %v, want Canceled (gRPC) or Unavailable (fast lane)", err)
			}
			s3 := openLane(t, p, t.Context())
			laneRequest(t, s3, "greet", `{"name":"z"}`)
			if _, ev := lanetest.Final(t, s3); ev.GetResult() == nil {
				t.Fatalf("greet on a new lane: %v", ev)
			}
		})
	}
}

// A plugin without Lane (here the test plugin serving only Describe and Execute) is called
// through Execute, and the probe that found out logs nothing.
func TestLanesFallBackToExecute(t *testing.T) {
	h, logs := newHost(t, Options{}, testPlugin("old", "nolane"))
	for range 3 {
		out, err := h.Execute(context.Background(), call("old", "echo", map[string]string{"name": "x"}), nil)
		if err != nil || !jsonEqual(t, out, `{"name":"x"}`) {
			t.Fatalf("echo = %s, %v", out, err)
		}
	}
	if on, idle := idleLanes(t, h, "old"); on || idle != 0 {
		t.Fatalf("lanes on=%v idle=%d for a plugin without Lane", on, idle)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("stop")) })
	_, err := h.Execute(ctx, call("old", "sleep", map[string]int{"ms": 10000}), nil)
	if ae := activityError(t, err); ae.Type != TypeCancelled {
		t.Fatalf("got %v", ae)
	}
	if _, err := h.Execute(context.Background(), call("old", "noop", nil), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "Lane") {
		t.Fatalf("probe logged: %s", logs)
	}
}

// A plugin whose Lane answers the probe with an event instead of ending is called through
// Execute, and the probe says why in the log (it used to panic on the missing error).
func TestLaneProbeAnsweredWithAnEvent(t *testing.T) {
	h, logs := newHost(t, Options{}, testPlugin("chatty", "chattylane"))
	out, err := h.Execute(context.Background(), call("chatty", "echo", map[string]string{"name": "x"}), nil)
	if err != nil || !jsonEqual(t, out, `{"name":"x"}`) {
		t.Fatalf("echo = %s, %v", out, err)
	}
	if on, idle := idleLanes(t, h, "chatty"); on || idle != 0 {
		t.Fatalf("lanes on=%v idle=%d for a plugin whose Lane misbehaved", on, idle)
	}
	if !strings.Contains(logs.String(), "answered a Lane stream closed at once with an event") {
		t.Fatalf("probe logged: %q", logs)
	}
}

// Concurrent calls open a lane each and keep at most maxIdleFastLanes fast lanes, or
// maxIdleLanes gRPC lanes (which share the plugin's stream limit), of them.
func TestLanesBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		fast bool
		keep int
	}{
		{"fast lanes", nil, true, maxIdleFastLanes},
		{"grpc lanes", []string{fastlane.EnvVar + "=0"}, false, maxIdleLanes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newHost(t, Options{}, Config{Name: "demo", Command: []string{bins.goExample}, Env: tc.env})
			n := tc.keep + 8
			errs := make(chan error, n)
			for range n {
				go func() {
					_, err := h.Execute(context.Background(), call("demo", "sleep", map[string]int{"ms": 300}), nil)
					errs <- err
				}()
			}
			for range n {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if _, idle := idleLanes(t, h, "demo"); idle != tc.keep {
				t.Fatalf("idle=%d after %d concurrent calls, want %d", idle, n, tc.keep)
			}
			if fast := usesFastLane(t, h, "demo"); fast != tc.fast {
				t.Fatalf("fast lanes %v, want %v", fast, tc.fast)
			}
		})
	}
}

// A plugin in Ruby without Lane answers it with Unknown "RuntimeError: Illegal arity of reply
// generator" (the grpc gem's bidi dispatch of its default method), not Unimplemented: it falls
// back to Execute as quietly as one that answers Unimplemented, under Unknown or Internal.
// Other Unknown and Internal answers are real failures of a Lane and are still logged.
func TestLaneFallbackQuietForRuby(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   codes.Code
		msg    string
		logged bool
	}{
		{"ruby", codes.Unknown, rubyNoMethod, false},
		{"ruby as internal", codes.Internal, rubyNoMethod, false},
		{"unimplemented", codes.Unimplemented, "unknown method Lane", false},
		{"real internal error", codes.Internal, "boom", true},
		{"other ruby error", codes.Unknown, "RuntimeError: lane broke", true},
		{"ruby message under another code", codes.FailedPrecondition, rubyNoMethod, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testPlugin("rb", "laneerror")
			cfg.Env = append(cfg.Env, fmt.Sprintf("WEND_TESTPLUGIN_LANE_CODE=%d", tc.code), "WEND_TESTPLUGIN_LANE_MESSAGE="+tc.msg)
			h, logs := newHost(t, Options{}, cfg)
			for range 2 {
				out, err := h.Execute(context.Background(), call("rb", "echo", map[string]string{"name": "x"}), nil)
				if err != nil || !jsonEqual(t, out, `{"name":"x"}`) {
					t.Fatalf("echo = %s, %v", out, err)
				}
			}
			if on, idle := idleLanes(t, h, "rb"); on || idle != 0 {
				t.Fatalf("lanes on=%v idle=%d for a plugin whose Lane fails", on, idle)
			}
			logged := strings.Contains(logs.String(), "Lane stream did not end cleanly")
			if logged != tc.logged {
				t.Fatalf("logged=%v, want %v: %q", logged, tc.logged, logs)
			}
			if tc.logged && !strings.Contains(logs.String(), tc.msg) {
				t.Fatalf("the log does not say what the plugin answered: %q", logs)
			}
		})
	}
}
