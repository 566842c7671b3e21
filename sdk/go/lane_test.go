package sdk

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/wendflow/wend/sdk/go/lanetest"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

func TestLane(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { laneTries(t, tr.open) })
	}
}

func laneTries(t *testing.T, open func(*testing.T, Activities) func(context.Context) testLane) {
	leftover := make(chan func() error, 1)
	s := open(t, Activities{
		"greet": Func(func(ctx *Context, in nameIn) (map[string]string, error) {
			return map[string]string{"greeting": "hello, " + in.Name}, nil
		}, "", ""),
		"block": Func(func(ctx *Context, _ any) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, "", ""),
		// leaves a goroutine that heartbeats after the try returned
		"leak": Func(func(ctx *Context, _ any) (string, error) {
			leftover <- func() error { return ctx.Heartbeat("late") }
			return "done", nil
		}, "", ""),
	})(context.Background())

	// Several tries, one after another, on one stream.
	for _, name := range []string{"ada", "grace", "alan"} {
		lanetest.Request(t, s, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"` + name + `"}`)})
		_, ev := lanetest.Final(t, s)
		if got, want := string(ev.GetResult().GetOutput()), `{"greeting":"hello, `+name+`"}`; got != want {
			t.Fatalf("result %q, want %q", got, want)
		}
	}

	// A cancel reaches the try in flight.
	lanetest.Request(t, s, &pluginv1.ExecuteRequest{Activity: "block"})
	time.Sleep(20 * time.Millisecond)
	lanetest.Cancel(t, s)
	if _, ev := lanetest.Final(t, s); ev.GetError().GetType() != TypeCancelled {
		t.Fatalf("cancelled try ended with %v, want a %s error", ev, TypeCancelled)
	}

	// A cancel with no try in flight is ignored; the next try runs to its result.
	lanetest.Cancel(t, s)
	lanetest.Request(t, s, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"x"}`)})
	if _, ev := lanetest.Final(t, s); ev.GetResult() == nil {
		t.Fatalf("try after a stray cancel ended with %v, want a result", ev)
	}

	// A heartbeat from a goroutine the last try left behind is refused, not sent into the next.
	lanetest.Request(t, s, &pluginv1.ExecuteRequest{Activity: "leak"})
	if _, ev := lanetest.Final(t, s); ev.GetResult() == nil {
		t.Fatalf("leak: %v", ev)
	}
	if err := (<-leftover)(); !errors.Is(err, errTryEnded) {
		t.Fatalf("late heartbeat: %v, want errTryEnded", err)
	}
	lanetest.Request(t, s, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"y"}`)})
	if hb, ev := lanetest.Final(t, s); hb != 0 || ev.GetResult() == nil {
		t.Fatalf("next try saw %d heartbeats and %v", hb, ev)
	}

	// Closing the send side ends the lane cleanly.
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after CloseSend: %v, want io.EOF", err)
	}
}

// Ending the lane's stream cancels the try in flight, and the handler returns.
func TestLaneEndCancelsTry(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { laneEndCancelsTry(t, tr.open) })
	}
}

func laneEndCancelsTry(t *testing.T, open func(*testing.T, Activities) func(context.Context) testLane) {
	stopped := make(chan error, 1)
	lane := open(t, Activities{
		"block": Func(func(ctx *Context, _ any) (any, error) {
			<-ctx.Done()
			stopped <- context.Cause(ctx.Context)
			return nil, ctx.Err()
		}, "", ""),
	})
	ctx, cancel := context.WithCancel(context.Background())
	s := lane(ctx)
	lanetest.Request(t, s, &pluginv1.ExecuteRequest{Activity: "block"})
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the try kept running after its lane ended")
	}
}
