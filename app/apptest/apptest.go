// Package apptest is the one setup of the tests that need wend running: an App over a
// database file (Open), or an engine and a Server over a store of the test's (Over), each
// logging to the test and closed with it. Tests only.
//
// The packages app assembles (server, server/metrics, schedule/runner, tracing) cannot use
// it in their own tests: importing app there would be an import cycle. They set up their
// engine with testkit/enginetest, which Over builds on.
package apptest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/app"
	"github.com/wendflow/wend/batch"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/testkit/enginetest"
)

// Options are what a test's App differs by; the zero value is a fresh database whose
// activities are the plugins its workflows declare.
type Options struct {
	// Dir holds the database (wend.db); a t.TempDir() when "".
	Dir string
	// Activities run the activities instead of the plugins, when set.
	Activities engine.Activities
	// Clock is the engine's (a fake clock); the wall clock when nil.
	Clock engine.Clock
	// PluginStartTimeout bounds a plugin's start; the host's default when 0.
	PluginStartTimeout time.Duration
}

// Open opens an App over a database file, its lines and its plugins' stderr logged to t; it
// closes with the test.
func Open(t testing.TB, o Options) *app.App {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	a, err := app.Open(app.Options{Path: filepath.Join(o.Dir, "wend.db"), Activities: o.Activities, Clock: o.Clock,
		PluginStartTimeout: o.PluginStartTimeout,
		PluginLog:          func(p, line string) { t.Logf("plugin %s: %s", p, line) },
		Logf:               t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// Over starts an engine over store (a fresh history.MemStore when nil) whose activities are
// acts (enginetest.Echo when nil), and returns it with a Server over both: the setup of the
// tests that need no database file. The engine closes with the test.
func Over(t testing.TB, store history.Store, acts engine.Activities) (*engine.Engine, *server.Server) {
	t.Helper()
	if store == nil {
		store = history.NewMemStore()
	}
	eng := enginetest.New(t, engine.Options{Store: store, Activities: acts})
	return eng, server.New(eng, store)
}

// Batches gives s batches kept in st (a fresh batch.MemStore when nil), resumed and started
// as wend serve's are; they stop with the test.
func Batches(t testing.TB, s *server.Server, st *batch.MemStore) *batch.Runner {
	t.Helper()
	if st == nil {
		st = &batch.MemStore{}
	}
	bs, err := batch.New(s, st, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	s.SetBatches(bs)
	bs.Start()
	t.Cleanup(bs.Close)
	return bs
}
