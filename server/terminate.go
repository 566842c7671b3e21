package server

import (
	"context"

	"github.com/wendflow/wend/history"
)

// Terminate stops the open run of the workflow (or run) id names at once: unlike Cancel, no
// compensation and no on_cancel step runs, so the run's effects stay as they are.
func (s *Server) Terminate(ctx context.Context, id, reason string) (history.Run, error) {
	if s.cluster != nil {
		return s.cluster.Terminate(ctx, id, reason)
	}
	return s.control(id, "a finished run cannot be terminated", func(wf string) error {
		return s.eng.Terminate(ctx, wf, reason)
	})
}
