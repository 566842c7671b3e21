package plugins

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wendflow/wend/sdk/go/fastlane"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// maxIdleLanes bounds the gRPC lanes a process keeps open between calls: enough for the usual
// concurrency, few enough that idle streams cannot crowd a plugin's stream limit.
const maxIdleLanes = 32

// maxIdleFastLanes bounds the fast lanes a process keeps open between calls. A fast lane is a
// connection of its own, under no stream limit, and an idle one costs a descriptor on each side
// and a parked goroutine in the plugin; the bound is the engine's default number of calls at
// once (engine.DefaultMaxActivities), so a fan-out that size finds its lanes open the next time
// instead of dialling most of them again (a for_each of 200 dialled 168 a run at a bound of 32).
const maxIdleFastLanes = 256

// tryStream is the stream one try runs on: a lane (the process has lanes on), reused by the
// next try if this one ends cleanly, or an Execute stream, used once.
type tryStream struct {
	stream laneStream
	cancel context.CancelFunc // ends the stream
}

// laneStream is the host's end of a try's stream: a gRPC Lane or Execute stream, or a fast lane.
type laneStream interface {
	Send(*pluginv1.ExecuteInput) error
	Recv() (*pluginv1.ExecuteEvent, error)
}

// lanes holds a process's idle lanes. on and fast are decided once at start by probeLanes.
type lanes struct {
	on   bool
	fast *fastOffer // new lanes are fast lanes; nil: gRPC lanes

	fastBroken atomic.Bool // a fast lane could not be opened: new lanes are gRPC lanes

	mu     sync.Mutex
	idle   []*tryStream
	closed bool
}

func (l *lanes) take() *tryStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.idle)
	if n == 0 {
		return nil
	}
	ts := l.idle[n-1]
	l.idle = l.idle[:n-1]
	return ts
}

// put returns a lane whose try ended cleanly; it is closed instead if the pool is full.
func (l *lanes) put(ts *tryStream) {
	limit := maxIdleLanes
	if _, fast := ts.stream.(*fastStream); fast {
		limit = maxIdleFastLanes
	}
	l.mu.Lock()
	if !l.closed && len(l.idle) < limit {
		l.idle = append(l.idle, ts)
		ts = nil
	}
	l.mu.Unlock()
	if ts != nil {
		ts.cancel()
	}
}

func (l *lanes) close() {
	l.mu.Lock()
	idle := l.idle
	l.idle, l.closed = nil, true
	l.mu.Unlock()
	for _, ts := range idle {
		ts.cancel()
	}
}

// open sends call's request on a stream: an idle lane, else a new lane (a fast lane when the
// plugin offered one), or a new Execute stream for a plugin without lanes.
func (p *process) open(call *pluginv1.ExecuteInput) (*tryStream, error) {
	for ts := p.lanes.take(); ts != nil; ts = p.lanes.take() {
		if err := ts.stream.Send(call); err == nil {
			return ts, nil
		}
		ts.cancel() // an idle lane that broke: the request never left, so use another
	}
	if ts := p.openFast(); ts != nil {
		if err := ts.stream.Send(call); err != nil {
			ts.cancel()
			return nil, err
		}
		return ts, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	newStream := p.rpc.Execute
	if p.lanes.on {
		newStream = p.rpc.Lane
	}
	s, err := newStream(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	if err := s.Send(call); err != nil {
		_, err = s.Recv() // Send reports io.EOF; the real error comes from Recv
		cancel()
		return nil, err
	}
	return &tryStream{stream: s, cancel: cancel}, nil
}

// probeLanes asks whether the plugin serves Lane: it opens one and closes its send side at
// once. A plugin with lanes ends it cleanly; one without answers Unimplemented, or Ruby's
// answer for the same (laneNotDefined). Anything else (an error, no answer within timeout)
// also means Execute only, and returns a note for the log: Execute is the contract, lanes only
// a faster road to it.
//
// The same probe asks for a fast lane (wantFastLane, acceptFastLane): the plugin's answer rides
// in the stream's header.
func (p *process) probeLanes(timeout time.Duration) (note string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	askFast := p.wantFastLane()
	if askFast {
		ctx = metadata.AppendToOutgoingContext(ctx, fastlane.AskKey, "1")
	}
	s, err := p.rpc.Lane(ctx)
	if err == nil {
		if err = s.CloseSend(); err == nil {
			_, err = s.Recv()
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		p.lanes.on = true
		if askFast {
			return p.acceptFastLane(s, timeout)
		}
	case status.Code(err) == codes.Unimplemented, laneNotDefined(err):
	case err == nil:
		return "wend: the plugin answered a Lane stream closed at once with an event; using Execute for every call"
	default:
		return "wend: the plugin's Lane stream did not end cleanly when closed (" + err.Error() + "); using Execute for every call"
	}
	return ""
}

// rubyNoMethod is the whole status message Ruby's gRPC (the grpc gem, 1.51 as Debian ships
// it) sends for a bidi method its service declares but the plugin's class does not define:
// the generated default method takes any arguments, which its bidi dispatch refuses before
// it could raise Unimplemented. Measured: status Unknown with this message.
const rubyNoMethod = "RuntimeError: Illegal arity of reply generator"

// laneNotDefined reports whether err is a plugin's way of saying it has no Lane other than
// Unimplemented: only Ruby's answer above, under Unknown (what the gem sends, measured) or
// Internal (as a user reported it). Any other Unknown or Internal error is a real failure
// of the plugin's Lane and is still logged.
func laneNotDefined(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	return (st.Code() == codes.Unknown || st.Code() == codes.Internal) && st.Message() == rubyNoMethod
}
