package sdk

import (
	"context"
	"errors"
	"io"
	"sync"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// Lane serves tries one after another over one stream (see the proto). One goroutine at a time
// receives; it runs each request's try itself, so a request is never handed from one goroutine
// to another on its way to the handler. While a try runs, the stream is read only once the
// handler has looked at its context (tryContext): then a new receiver starts, which passes a
// Cancel to the try and takes over the lane. A handler that never looks at its context (it
// could not act on a Cancel) costs no goroutine and no wake-up.
func (s *server) Lane(stream pluginv1.Activities_LaneServer) error {
	s.offerFastLane(stream)
	return s.runLane(stream)
}

// laneStream is what a lane runs on: a gRPC Lane stream or a fast lane's connection.
type laneStream interface {
	Recv() (*pluginv1.ExecuteInput, error)
	Send(*pluginv1.ExecuteEvent) error
	Context() context.Context
}

// runLane serves tries on stream until it ends.
func (s *server) runLane(stream laneStream) error {
	l := &lane{srv: s, stream: stream, done: make(chan error, 1)}
	l.receive()
	return <-l.done
}

type lane struct {
	srv    *server
	stream laneStream
	done   chan error // the handler's return value, sent once

	mu      sync.Mutex
	cancel  context.CancelCauseFunc // of the try in flight while a receiver watches it; else nil
	tryDone chan struct{}           // closed once that try has sent its final event
}

// receive reads the next message until the lane ends or it hands the reading to the receiver a
// try's context started. A cancel cancels the watched try in flight (if any) and it reads on; a
// request waits for that try to end, then runs on this goroutine; the end of the stream cancels
// the try in flight, waits for it and ends the lane.
func (l *lane) receive() {
	for {
		in, err := l.stream.Recv()
		l.mu.Lock()
		cancel, prev := l.cancel, l.tryDone
		l.mu.Unlock()
		if err != nil {
			if cancel != nil {
				cancel(errHostCancelled)
			}
			if prev != nil {
				<-prev
			}
			if errors.Is(err, io.EOF) { // the host closed the lane
				err = nil
			}
			l.done <- err
			return
		}
		if in.GetCancel() != nil {
			if cancel != nil {
				cancel(errHostCancelled)
			}
			continue
		}
		req := in.GetRequest()
		if req == nil {
			continue // an empty message: nothing to do
		}
		if prev != nil {
			<-prev // the host sent the next request before reading the last result
		}
		if handedOff := l.run(req); handedOff {
			return
		}
	}
}

// run runs one try on this goroutine; handedOff reports that its context started a receiver,
// which now reads the lane.
func (l *lane) run(req *pluginv1.ExecuteRequest) (handedOff bool) {
	var tryDone chan struct{}
	tc := &tryContext{parent: l.stream.Context(), onMake: func(cancel context.CancelCauseFunc) {
		tryDone = make(chan struct{})
		l.mu.Lock()
		l.cancel, l.tryDone = cancel, tryDone
		l.mu.Unlock()
		go l.receive()
	}}
	// An error here means the final event could not be sent: the stream is broken, so the
	// receiver's Recv fails too and ends the lane.
	_ = l.srv.serve(tc, &try{stream: l.stream}, req)
	if !tc.end() || tryDone == nil {
		return false
	}
	l.mu.Lock()
	l.cancel, l.tryDone = nil, nil
	l.mu.Unlock()
	close(tryDone)
	return true
}
