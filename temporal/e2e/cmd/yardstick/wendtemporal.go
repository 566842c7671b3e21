package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/driver"
	"github.com/wendflow/wend/temporal/wire"
	twork "github.com/wendflow/wend/temporal/worker"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

const wendQueue = "yardstick-wend"

// wendTemporal runs the files as workflow wend.v1 on the embedded server: one worker with
// the driver and the worker's own activity (worker.Activities.Call) over the in-process
// no-op instead of a plugin process.
type wendTemporal struct {
	c     client.Client
	w     worker.Worker // nil when the workers are other processes (scaleOut)
	queue string
	n     atomic.Int64
}

func startWendTemporal(c client.Client) (*wendTemporal, error) {
	w, err := startWendWorker(c, wendQueue)
	if err != nil {
		return nil, err
	}
	return &wendTemporal{c: c, w: w, queue: wendQueue}, nil
}

// startWendWorker starts a worker on queue hosting the driver and worker.Activities.Call
// over the no-op, with the SDK's default options (task slots, sticky cache).
func startWendWorker(c client.Client, queue string) (worker.Worker, error) {
	w := worker.New(c, queue, worker.Options{})
	driver.Register(w)
	acts := &twork.Activities{Plugins: noopActs{}, Client: c}
	acts.Register(w)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("wend worker on %s: %w", queue, err)
	}
	return w, nil
}

func (wt *wendTemporal) stop() { wt.w.Stop() }

func (wt *wendTemporal) start(ctx context.Context, name, src string, input json.RawMessage) (client.WorkflowRun, error) {
	if input == nil {
		input = json.RawMessage("null")
	}
	id := fmt.Sprintf("%s-%s-%d", wt.queue, name, wt.n.Add(1))
	sum := sha256.Sum256([]byte(src))
	in := wire.StartInput{Started: history.Started{WorkflowID: id, Input: input, SpecFile: name + ".wend.yaml",
		SpecSource: src, SpecSHA256: hex.EncodeToString(sum[:])}}
	return wt.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: wt.queue}, wire.WorkflowType, in)
}

func (wt *wendTemporal) run(ctx context.Context, name, src string, input json.RawMessage) error {
	r, err := wt.start(ctx, name, src, input)
	if err != nil {
		return err
	}
	return r.Get(ctx, nil)
}

func (wt *wendTemporal) seq(ctx context.Context) error { return wt.run(ctx, "seq", seqSpec, nil) }
func (wt *wendTemporal) fan(ctx context.Context) error { return wt.run(ctx, "fan", fanSpec, fanInput) }
func (wt *wendTemporal) three(ctx context.Context) error {
	return together(100, func(int) error { return wt.run(ctx, "three", threeSpec, nil) })
}

// waitSpec: one activity, then a wait that lasts until the run is terminated.
const waitSpec = "wend: v1\nname: parked\nplugins: {p: ./p}\nsteps:\n  - {activity: p.echo, with: {i: 1}}\n  - wait_for_signal: never\n"

// heapPerOpenRun starts n runs with start, waits until each has had hist Temporal events
// (its first activity done and the run parked), and returns the live heap's growth per run
// in KiB. Server and worker share this process, so the figure holds both; the plain
// workflow's figure beside it is the baseline.
func heapPerOpenRun(ctx context.Context, c client.Client, n int, hist int64, start func(i int) (client.WorkflowRun, error)) (float64, error) {
	before := liveHeap()
	var ids []string
	for i := range n {
		r, err := start(i)
		if err != nil {
			return 0, err
		}
		ids = append(ids, r.GetID())
	}
	deadline := time.Now().Add(5 * time.Minute)
	for _, id := range ids {
		for {
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			if err != nil {
				return 0, err
			}
			if d.WorkflowExecutionInfo.HistoryLength >= hist {
				break
			}
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("%s: %d Temporal events after 5 minutes, want %d", id, d.WorkflowExecutionInfo.HistoryLength, hist)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	after := liveHeap()
	for _, id := range ids {
		_ = c.TerminateWorkflow(ctx, id, "", "yardstick done")
	}
	return float64(after-before) / float64(n) / 1024, nil
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
