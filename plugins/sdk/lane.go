package sdk

import (
	"context"
	"errors"
	"io"
	"sync"

	pluginv1 "github.com/wendflow/wend/plugins/proto/wend/plugin/v1"
)

// Lane serves tries one after another over one stream (see the proto). The goroutine that
// receives a request runs that try, having first started the next receiver, so a request is
// never handed from one goroutine to another on its way to the handler: each hand-off costs a
// wake-up, which is most of a no-op call's time.
func (s *server) Lane(stream pluginv1.Activities_LaneServer) error {
	l := &lane{srv: s, stream: stream, done: make(chan error, 1)}
	go l.receive()
	return <-l.done
}

type lane struct {
	srv    *server
	stream pluginv1.Activities_LaneServer
	done   chan error // the handler's return value, sent once

	mu      sync.Mutex
	cancel  context.CancelCauseFunc // of the try in flight; nil when idle
	tryDone chan struct{}           // closed once the try in flight has sent its final event
}

// receive reads the next message. A cancel cancels the try in flight (if any) and it reads on;
// a request waits for the previous try to end, then runs on this goroutine; the end of the
// stream cancels the try in flight, waits for it and ends the lane.
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
		l.run(req)
		return
	}
}

func (l *lane) run(req *pluginv1.ExecuteRequest) {
	ctx, cancel := context.WithCancelCause(l.stream.Context())
	tryDone := make(chan struct{})
	l.mu.Lock()
	l.cancel, l.tryDone = cancel, tryDone
	l.mu.Unlock()
	go l.receive()

	t := &try{stream: l.stream}
	// An error here means the final event could not be sent: the stream is broken, so the
	// receiver's Recv fails too and ends the lane.
	_ = l.srv.serve(ctx, t, req)
	l.mu.Lock()
	l.cancel, l.tryDone = nil, nil
	l.mu.Unlock()
	cancel(nil)
	close(tryDone)
}
