package sdk

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	pluginv1 "github.com/wendflow/wend/plugins/proto/wend/plugin/v1"
)

func sendReq(t *testing.T, s pluginv1.Activities_LaneClient, req *pluginv1.ExecuteRequest) {
	t.Helper()
	if err := s.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: req}}); err != nil {
		t.Fatal(err)
	}
}

func sendCancel(t *testing.T, s pluginv1.Activities_LaneClient) {
	t.Helper()
	if err := s.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Cancel{Cancel: &pluginv1.Cancel{Reason: "cancelled"}}}); err != nil {
		t.Fatal(err)
	}
}

// final reads events up to the try's final one and returns the heartbeats seen and the final.
func final(t *testing.T, s pluginv1.Activities_LaneClient) (heartbeats int, last *pluginv1.ExecuteEvent) {
	t.Helper()
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("lane ended before the try's final event: %v", err)
		}
		if ev.GetHeartbeat() != nil {
			heartbeats++
			continue
		}
		return heartbeats, ev
	}
}

func TestLane(t *testing.T) {
	leftover := make(chan func() error, 1)
	c := serve(t, Activities{
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
	})
	s, err := c.Lane(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	// Several tries, one after another, on one stream.
	for _, name := range []string{"ada", "grace", "alan"} {
		sendReq(t, s, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"` + name + `"}`)})
		_, ev := final(t, s)
		if got, want := string(ev.GetResult().GetOutput()), `{"greeting":"hello, `+name+`"}`; got != want {
			t.Fatalf("result %q, want %q", got, want)
		}
	}

	// A cancel reaches the try in flight.
	sendReq(t, s, &pluginv1.ExecuteRequest{Activity: "block"})
	time.Sleep(20 * time.Millisecond)
	sendCancel(t, s)
	if _, ev := final(t, s); ev.GetError().GetType() != TypeCancelled {
		t.Fatalf("cancelled try ended with %v, want a %s error", ev, TypeCancelled)
	}

	// A cancel with no try in flight is ignored; the next try runs to its result.
	sendCancel(t, s)
	sendReq(t, s, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"x"}`)})
	if _, ev := final(t, s); ev.GetResult() == nil {
		t.Fatalf("try after a stray cancel ended with %v, want a result", ev)
	}

	// A heartbeat from a goroutine the last try left behind is refused, not sent into the next.
	sendReq(t, s, &pluginv1.ExecuteRequest{Activity: "leak"})
	if _, ev := final(t, s); ev.GetResult() == nil {
		t.Fatalf("leak: %v", ev)
	}
	if err := (<-leftover)(); !errors.Is(err, errTryEnded) {
		t.Fatalf("late heartbeat: %v, want errTryEnded", err)
	}
	sendReq(t, s, &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"y"}`)})
	if hb, ev := final(t, s); hb != 0 || ev.GetResult() == nil {
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
	stopped := make(chan error, 1)
	c := serve(t, Activities{
		"block": Func(func(ctx *Context, _ any) (any, error) {
			<-ctx.Done()
			stopped <- context.Cause(ctx.Context)
			return nil, ctx.Err()
		}, "", ""),
	})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Lane(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sendReq(t, s, &pluginv1.ExecuteRequest{Activity: "block"})
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the try kept running after its lane ended")
	}
}
