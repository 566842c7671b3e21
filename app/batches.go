package app

import (
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/metrics"
)

// StartBatches makes wend serve's batches (POST /v1/batches), resumes those a stop left
// running, and publishes their metrics; Configure gives them to a server, Stop stops them
// before the engine.
func (a *App) StartBatches() error {
	bs, err := batch.New(server.New(a.Engine, a.Store), a.Store, a.logf)
	if err != nil {
		return err
	}
	a.Batches = bs
	a.Meter.SetBatches(func() metrics.BatchCounts {
		by, pending := bs.Counts()
		return metrics.BatchCounts{ByStatus: by, Pending: pending}
	})
	bs.Start()
	return nil
}
