package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

const plainQueue = "yardstick-plain"

// plain runs the workloads as hand-written SDK workflows: what a Temporal user would write
// for the same steps, with the options wend's driver uses (one try per activity).
type plain struct {
	c    client.Client
	w    worker.Worker
	seqN atomic.Int64
}

func noop(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil }

func activityCtx(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// plainSeq calls the no-op n times, one after the other.
func plainSeq(ctx workflow.Context, n int) error {
	ctx = activityCtx(ctx)
	for i := range n {
		in, _ := json.Marshal(map[string]int{"i": i})
		if err := workflow.ExecuteActivity(ctx, "noop", json.RawMessage(in)).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// plainFan calls the no-op n times at once and waits for all.
func plainFan(ctx workflow.Context, n int) error {
	ctx = activityCtx(ctx)
	fs := make([]workflow.Future, n)
	for i := range n {
		fs[i] = workflow.ExecuteActivity(ctx, "noop", json.RawMessage("0"))
	}
	for _, f := range fs {
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// plainParked calls the no-op once, then waits for a signal nobody sends.
func plainParked(ctx workflow.Context) error {
	if err := workflow.ExecuteActivity(activityCtx(ctx), "noop", json.RawMessage("1")).Get(ctx, nil); err != nil {
		return err
	}
	workflow.GetSignalChannel(ctx, "never").Receive(ctx, nil)
	return nil
}

func startPlain(c client.Client) (*plain, error) {
	w := worker.New(c, plainQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(plainSeq, workflow.RegisterOptions{Name: "plain.seq"})
	w.RegisterWorkflowWithOptions(plainFan, workflow.RegisterOptions{Name: "plain.fan"})
	w.RegisterWorkflowWithOptions(plainParked, workflow.RegisterOptions{Name: "plain.parked"})
	w.RegisterActivityWithOptions(noop, activity.RegisterOptions{Name: "noop"})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("plain worker: %w", err)
	}
	return &plain{c: c, w: w}, nil
}

func (p *plain) stop() { p.w.Stop() }

func (p *plain) exec(ctx context.Context, wf string, n int) error {
	id := fmt.Sprintf("plain-%d", p.seqN.Add(1))
	r, err := p.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: plainQueue}, wf, n)
	if err != nil {
		return err
	}
	return r.Get(ctx, nil)
}

func (p *plain) seq(ctx context.Context) error { return p.exec(ctx, "plain.seq", 200) }
func (p *plain) fan(ctx context.Context) error { return p.exec(ctx, "plain.fan", 200) }

func (p *plain) three(ctx context.Context) error {
	return together(100, func(int) error { return p.exec(ctx, "plain.seq", 3) })
}

// together runs fn n times concurrently and returns the first error.
func together(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(i) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
