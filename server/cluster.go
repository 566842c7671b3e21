package server

import (
	"context"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/engine"
)

// Cluster is where the runs live when no engine of this process drives them: a Temporal
// cluster, for wend serve --temporal. Its methods mean what Server's methods of the same names
// mean and fail with the same *Error codes, so the API and the web UI serve either alike.
// Server keeps the edge's checks (ids, payload sizes, JSON, a workflow's validity, registered
// names) and hands the rest over.
type Cluster interface {
	// List returns the runs passing q's filters (q's Limit and Cursor unused), newest first, at
	// most limit (0: all); never nil.
	List(q api.ListQuery, limit int) ([]history.Run, error)
	// Resolve returns the run id names: the newest run of a workflow id, else a run id.
	Resolve(id string) (history.Run, error)
	Events(id string, after uint64) (api.EventPage, error)
	Show(id string) (api.RunDetail, error)
	Start(ctx context.Context, req engine.StartRequest) (api.Started, error)
	SendSignal(ctx context.Context, id string, req api.SignalRequest) (api.SignalSent, error)
	Cancel(ctx context.Context, id, reason string) (history.Run, error)
	Terminate(ctx context.Context, id, reason string) (history.Run, error)
	Retry(ctx context.Context, id string) (api.Retried, error)
	Repair(ctx context.Context, id string) (api.RepairReport, error)
	Wait(ctx context.Context, id string, timeout time.Duration) (api.Outcome, error)
	Export(id string) (*export.Document, error)
	Query(id, expr string) (api.QueryResult, error)
	Check() (api.CheckReport, error)
}

// Over makes a Server whose runs live in c. Plugin rolling and schedules are not served: the
// cluster's workers run the plugins, and Temporal's schedules fire there.
func Over(c Cluster) *Server {
	s := &Server{cluster: c}
	s.mux = s.routes()
	return s
}
