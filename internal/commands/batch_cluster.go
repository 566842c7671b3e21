package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/wendflow/wend/server"
)

// clusterBatchTimeout bounds a wend batch command's calls to the cluster.
const clusterBatchTimeout = 30 * time.Second

// batchOnCluster is wend batch with --temporal: the namespace's batch operations, those
// wend serve --temporal started and others, read and stopped through the backend. Only what
// the cluster keeps is shown (the operation, reason, state and counts), not a filter.
func batchOnCluster(e *env, sub, id string, asJSON bool) int {
	b, err := e.openTemporal()
	if err != nil {
		fmt.Fprintf(e.stderr, "wend batch: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	cb, ok := b.(server.ClusterBatches)
	if !ok {
		fmt.Fprintf(e.stderr, "wend batch: this build's Temporal backend runs no batches\n")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterBatchTimeout)
	defer cancel()
	switch sub {
	case "list":
		bs, err := cb.Batches(ctx)
		if err != nil {
			return commandError(e, "batch", err)
		}
		if asJSON {
			return printBatchJSON(e, bs)
		}
		printBatches(e, bs)
		return exitOK
	case "show":
		bt, err := cb.Batch(ctx, id)
		if err != nil {
			return commandError(e, "batch", err)
		}
		if asJSON {
			return printBatchJSON(e, bt)
		}
		printBatch(e, bt)
		return exitOK
	}
	bt, err := cb.Batch(ctx, id)
	if err == nil && bt.Open() {
		bt, err = cb.StopBatch(ctx, id)
	}
	if err != nil {
		return commandError(e, "batch", err)
	}
	fmt.Fprintf(e.stdout, "batch %s is %s: %d of %d run(s) acted on\n", bt.ID, bt.Status, bt.Done+bt.Failed+bt.Skipped, bt.Total)
	return exitOK
}
