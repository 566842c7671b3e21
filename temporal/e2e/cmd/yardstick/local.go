package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// The workloads as wend files; plugin p is never started: the engine (or the worker) is
// given in-process no-op activities.
var (
	seqSpec   = "wend: v1\nname: seq200\nplugins: {p: ./p}\nsteps:\n" + seqSteps(200)
	fanSpec   = "wend: v1\nname: fan200\nplugins: {p: ./p}\nsteps:\n  - for_each: \"${{ input.items }}\"\n    concurrency: 200\n    steps: [{activity: p.echo, with: \"${{ item }}\"}]\n"
	threeSpec = "wend: v1\nname: three\nplugins: {p: ./p}\nsteps:\n" + seqSteps(3)
	fanInput  = func() json.RawMessage {
		b, _ := json.Marshal(map[string]any{"items": make([]int, 200)})
		return b
	}()
)

func seqSteps(n int) string {
	var s strings.Builder
	for i := range n {
		fmt.Fprintf(&s, "  - {id: s%d, activity: p.echo, with: {i: %d}}\n", i, i)
	}
	return s.String()
}

// noopActs answers every activity at once with its input, like the plain workflows' noop.
type noopActs struct{}

func (noopActs) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	return c.Input, nil
}

// local runs the files on wend's local engine, one bbolt database for the whole run, as a
// long-running `wend serve` would.
type local struct {
	store *boltstore.Store
	eng   *engine.Engine
	n     atomic.Int64
}

func newLocal(dir string) (*local, error) {
	st, err := boltstore.Open(filepath.Join(dir, "local.db"), boltstore.Options{})
	if err != nil {
		return nil, err
	}
	return &local{store: st, eng: engine.New(engine.Options{Store: st, Activities: noopActs{}, MaxActivities: 512})}, nil
}

func (l *local) close() { l.eng.Close(); l.store.Close() }

func (l *local) run(ctx context.Context, name, src string, input json.RawMessage) error {
	id := fmt.Sprintf("%s-%d", name, l.n.Add(1))
	if _, _, err := l.eng.Start(ctx, engine.StartRequest{WorkflowID: id, SpecFile: name + ".wend.yaml", Source: src, Input: input}); err != nil {
		return err
	}
	rec, err := l.eng.WaitClosed(ctx, id)
	if err != nil {
		return err
	}
	if rec.Status != history.StatusCompleted {
		return fmt.Errorf("%s ended %s", id, rec.Status)
	}
	return nil
}

func (l *local) seq(ctx context.Context) error { return l.run(ctx, "seq", seqSpec, nil) }
func (l *local) fan(ctx context.Context) error { return l.run(ctx, "fan", fanSpec, fanInput) }
func (l *local) three(ctx context.Context) error {
	return together(100, func(int) error { return l.run(ctx, "three", threeSpec, nil) })
}
