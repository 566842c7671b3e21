package sdk

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// fakeLane is a Lane stream fed by the test; it counts the goroutines inside Recv.
type fakeLane struct {
	grpc.ServerStream
	ctx context.Context
	in  chan *pluginv1.ExecuteInput // closed: the host closed its side
	out chan *pluginv1.ExecuteEvent

	mu                 sync.Mutex
	receiving, maxRecv int
}

func newFakeLane(t *testing.T, acts Activities) *fakeLane {
	f := &fakeLane{ctx: context.Background(), in: make(chan *pluginv1.ExecuteInput, 4), out: make(chan *pluginv1.ExecuteEvent, 4)}
	done := make(chan error, 1)
	go func() { done <- NewServer(acts).Lane(f) }()
	t.Cleanup(func() {
		close(f.in)
		if err := <-done; err != nil {
			t.Errorf("lane ended with %v", err)
		}
		if f.maxRecv > 1 {
			t.Errorf("%d goroutines received on the lane at once; one may", f.maxRecv)
		}
	})
	return f
}

func (f *fakeLane) Context() context.Context { return f.ctx }

func (f *fakeLane) Send(ev *pluginv1.ExecuteEvent) error { f.out <- ev; return nil }

func (f *fakeLane) Recv() (*pluginv1.ExecuteInput, error) {
	f.mu.Lock()
	f.receiving++
	f.maxRecv = max(f.maxRecv, f.receiving)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.receiving--
		f.mu.Unlock()
	}()
	in, ok := <-f.in
	if !ok {
		return nil, io.EOF
	}
	return in, nil
}

func (f *fakeLane) receivers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.receiving
}

func (f *fakeLane) request(activity string) {
	f.in <- &pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: &pluginv1.ExecuteRequest{Activity: activity}}}
}

func (f *fakeLane) cancel() {
	f.in <- &pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Cancel{Cancel: &pluginv1.Cancel{Reason: "cancelled"}}}
}

// A try whose handler never looks at its context runs with nobody reading the lane: no receiver
// goroutine is started for it (before, every try started one, a wake-up per call).
func TestLaneTryIgnoringItsContextStartsNoReceiver(t *testing.T) {
	seen := make(chan int, 3)
	var f *fakeLane
	f = newFakeLane(t, Activities{"plain": {Run: func(*Context, json.RawMessage) (any, error) {
		// Give a receiver started for this try time to reach Recv.
		deadline := time.Now().Add(100 * time.Millisecond)
		for f.receivers() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		seen <- f.receivers()
		return "ok", nil
	}}})
	for range 3 {
		f.request("plain")
		if ev := <-f.out; string(ev.GetResult().GetOutput()) != `"ok"` {
			t.Fatalf("try ended with %v, want the result", ev)
		}
		if n := <-seen; n != 0 {
			t.Fatalf("%d goroutines read the lane while the try ran; want none", n)
		}
	}
}

// A handler that polls Err (never Done) still sees the host's Cancel: the first use of its
// context starts the receiver, which takes the lane over for the next tries.
func TestLaneContextUseStartsReceiverForCancel(t *testing.T) {
	started := make(chan struct{}, 1)
	f := newFakeLane(t, Activities{
		"poll": {Run: func(ctx *Context, _ json.RawMessage) (any, error) {
			_ = ctx.Err()
			started <- struct{}{}
			for ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			return nil, ctx.Err()
		}},
		"plain": {Run: func(*Context, json.RawMessage) (any, error) { return "ok", nil }},
	})
	for range 2 {
		f.request("poll")
		<-started
		f.cancel()
		if ev := <-f.out; ev.GetError().GetType() != TypeCancelled {
			t.Fatalf("cancelled try ended with %v, want a %s error", ev, TypeCancelled)
		}
		f.request("plain")
		if ev := <-f.out; ev.GetResult() == nil {
			t.Fatalf("next try ended with %v, want a result", ev)
		}
	}
}

// A Cancel for a try that never looked at its context waits in the stream; the try ends with
// its result, the lane drops the stray Cancel and serves the next try.
func TestLaneCancelForTryIgnoringContext(t *testing.T) {
	release := make(chan struct{})
	f := newFakeLane(t, Activities{
		"wait":  {Run: func(*Context, json.RawMessage) (any, error) { <-release; return "waited", nil }},
		"plain": {Run: func(*Context, json.RawMessage) (any, error) { return "ok", nil }},
	})
	f.request("wait")
	f.cancel()
	close(release)
	if ev := <-f.out; string(ev.GetResult().GetOutput()) != `"waited"` {
		t.Fatalf("try ended with %v, want its result", ev)
	}
	f.request("plain")
	if ev := <-f.out; string(ev.GetResult().GetOutput()) != `"ok"` {
		t.Fatalf("next try ended with %v, want its result", ev)
	}
}

// A context first used after its try ended (by a goroutine the handler left) is already
// cancelled and starts no receiver: the lane's own goroutine is reading the next request.
func TestLaneContextUsedAfterTryIsCancelled(t *testing.T) {
	leftover := make(chan *Context, 1)
	f := newFakeLane(t, Activities{
		"leak":  {Run: func(ctx *Context, _ json.RawMessage) (any, error) { leftover <- ctx; return "ok", nil }},
		"plain": {Run: func(*Context, json.RawMessage) (any, error) { return "ok", nil }},
	})
	f.request("leak")
	<-f.out
	ctx := <-leftover
	select {
	case <-ctx.Done():
	default:
		t.Fatal("the ended try's context is not done")
	}
	f.request("plain")
	if ev := <-f.out; ev.GetResult() == nil {
		t.Fatalf("next try ended with %v, want a result", ev)
	}
}

type ctxKey struct{}

// The try's deadline holds whether or not the handler used its context before it passed, and
// the context carries the stream's values.
func TestTryContextDeadline(t *testing.T) {
	past := time.Now().Add(-time.Second)
	tc := &tryContext{parent: context.WithValue(context.Background(), ctxKey{}, "v"), deadline: past}
	if err := tc.err(); err != context.DeadlineExceeded {
		t.Fatalf("unused context past its deadline: err %v, want DeadlineExceeded", err)
	}
	if d, ok := tc.Deadline(); !ok || !d.Equal(past) {
		t.Fatalf("Deadline() = %v, %v; want %v", d, ok, past)
	}
	if err := tc.Err(); err != context.DeadlineExceeded {
		t.Fatalf("Err() = %v, want DeadlineExceeded", err)
	}
	if v := tc.Value(ctxKey{}); v != "v" {
		t.Fatalf("Value = %v, want the parent's", v)
	}
	if !tc.end() {
		t.Fatal("end: the context was used, want true")
	}
}
