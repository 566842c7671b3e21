// Package enginetest is the one engine setup of wend's tests: an engine over a store,
// running its activities in the test's process, logging to the test and closed with it.
// Tests only. It imports no more than the engine and history, so the packages the
// application assembles (server, tracing, schedule/runner) use it in their own tests;
// app/apptest builds its setups on it.
package enginetest

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// Echo is activities that return each call's input: a plugin that does nothing wrong.
type Echo struct{}

// Execute is the engine's Activities port.
func (Echo) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	return c.Input, nil
}

// Outage plays a plugin whose backend can go down: its "charge" activity fails, in a way a
// retry may fix, while Down is set; every other activity returns its input.
type Outage struct{ Down atomic.Bool }

// Execute is the engine's Activities port.
func (o *Outage) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	if c.Activity == "charge" && o.Down.Load() {
		return nil, &history.ActivityError{Type: "Down", Message: "bank down"}
	}
	return c.Input, nil
}

// New starts an engine on o, whose zero fields are a test's usual: a fresh history.MemStore
// for Store, Echo for Activities, t.Logf for Logf. The engine closes with the test; closing
// it before (to read what it left, or to restart over the same store) is fine.
func New(t testing.TB, o engine.Options) *engine.Engine {
	t.Helper()
	if o.Store == nil {
		o.Store = history.NewMemStore()
	}
	if o.Activities == nil {
		o.Activities = Echo{}
	}
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	eng := engine.New(o)
	t.Cleanup(func() { eng.Close() })
	return eng
}
