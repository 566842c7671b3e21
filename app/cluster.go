package app

import (
	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/server"
)

// OverCluster is the Server of wend serve --temporal: the runs live in c, the workflows given
// are registered, and when c runs batches itself (Temporal's batch operations, durable on the
// cluster) POST /v1/batches hands them over. logf prints the batches' lines.
func OverCluster(c server.Cluster, workflows []api.Workflow, logf func(format string, args ...any)) *server.Server {
	s := server.Over(c)
	if len(workflows) > 0 {
		s.SetWorkflows(workflows)
	}
	if cb, ok := c.(server.ClusterBatches); ok {
		s.SetBatches(batch.NewCluster(s, cb, logf))
	}
	return s
}
