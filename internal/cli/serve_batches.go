package cli

import (
	"fmt"

	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/metrics"
)

// startBatches makes the batches of wend serve (POST /v1/batches), resumes those a stop left
// running, and gives them to both servers (socket and TCP) through serveBatches; d.close
// stops them before the engine.
func (d *driver) startBatches() error {
	st, ok := d.store.(batch.Store)
	if !ok {
		return fmt.Errorf("batches need the database store")
	}
	bs, err := batch.New(server.New(d.eng, d.store), st,
		func(format string, args ...any) { fmt.Fprintf(d.e.stderr, format+"\n", args...) })
	if err != nil {
		return err
	}
	d.batches = bs
	d.meter.SetBatches(func() metrics.BatchCounts {
		by, pending := bs.Counts()
		return metrics.BatchCounts{ByStatus: by, Pending: pending}
	})
	bs.Start()
	return nil
}

// serveBatches gives a server (the socket's or TCP's) the batches, before it listens.
func (d *driver) serveBatches(s *server.Server) {
	if d.batches != nil {
		s.SetBatches(d.batches)
	}
}
