package server

import (
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
)

// unstarted is the detail of a run with no history: queued under its workflow's concurrency
// key, or cancelled there before it started.
func (s *Server) unstarted(r history.Run) (api.RunDetail, error) {
	d := api.RunDetail{Run: r, Events: []history.Event{}, Waits: []runview.Wait{}, Signals: []history.Signal{}, Failures: []runview.FailureAt{}}
	q, ok, err := s.Queue(r)
	if err != nil {
		return api.RunDetail{}, err
	}
	if ok {
		d.Queue = &q
	}
	return d, nil
}

// Queue says what a queued run waits for: the engine's counts when one drives the store,
// else what the store says. false when r is not queued (any more).
func (s *Server) Queue(r history.Run) (runview.Queue, bool, error) {
	if r.Status != history.StatusQueued {
		return runview.Queue{}, false, nil
	}
	if s.eng != nil {
		if qi, ok := s.eng.Queued(r.WorkflowID); ok {
			return runview.Queue(qi), true, nil
		}
	}
	qi, ok, err := engine.StoredQueue(s.store, r)
	if err != nil {
		return runview.Queue{}, false, wrap(fmt.Errorf("read the queue of run %s: %w", r.RunID, err))
	}
	return runview.Queue(qi), ok, nil
}

// unstartedWhy says where a run with no history is: it waits queued, or was closed there.
func unstartedWhy(r history.Run) string {
	if r.Status == history.StatusQueued {
		return "it waits queued under its workflow's concurrency key and has not started"
	}
	return "it was " + r.ClosedReason + " while queued under its workflow's concurrency key, before it started"
}
