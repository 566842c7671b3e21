package metrics

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// acts plays the plugins: "fail" fails for good, "flaky" fails in a way a retry may fix,
// everything else echoes its input.
type acts struct{}

func (acts) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	switch c.Activity {
	case "fail":
		return nil, &history.ActivityError{Type: "CardDeclined", Message: "declined", NonRetryable: true}
	case "flaky":
		return nil, &history.ActivityError{Type: "Busy", Message: "try later"}
	}
	return c.Input, nil
}

const (
	failSpec = `wend: v1
name: failing
plugins: {demo: ./demo}
steps:
  - id: charge
    activity: demo.fail
`
	flakySpec = `wend: v1
name: flaky
plugins: {demo: ./demo}
steps:
  - id: call
    activity: demo.flaky
    retry: {tries: 3, backoff: [1h]}
`
	waitSpec = `wend: v1
name: approval
plugins: {demo: ./demo}
steps:
  - id: greet
    activity: demo.echo
  - id: approve
    wait_for_signal: approve
`
	delaySpec = `wend: v1
name: typed
steps: [{delay: 1h}]
`
)

// fixture is an engine over a memory store whose commits the Metrics time, a read server to
// start and watch runs with, and the metrics handler as wend serve mounts it.
type fixture struct {
	t    *testing.T
	m    *Metrics
	srv  *server.Server
	dir  string
	http *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	m := New("")
	store := history.NewMemStore()
	eng := engine.New(engine.Options{Store: m.TimeCommits(store), Activities: acts{}, Logf: t.Logf})
	t.Cleanup(func() { eng.Close() })
	f := &fixture{t: t, m: m, srv: server.New(eng, store), dir: t.TempDir(), http: httptest.NewServer(m.Handler(store, eng))}
	t.Cleanup(f.http.Close)
	return f
}

func (f *fixture) start(id, src string) history.Run {
	f.t.Helper()
	st, err := f.srv.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, id+".wend.yaml"), Source: src})
	if err != nil {
		f.t.Fatal(err)
	}
	return st.Run
}

// settle waits until the run of id satisfies cond.
func (f *fixture) settle(id string, cond func(server.RunDetail) bool) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := f.srv.Show(id)
		if err == nil && cond(d) {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("run %s: condition not met: %+v %v", id, d.Run, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func closed(d server.RunDetail) bool { return !d.Run.Open() }

func waitingFor(kind string, attempt int) func(server.RunDetail) bool {
	return func(d server.RunDetail) bool {
		for _, w := range d.Waits {
			if w.Kind == kind && w.Attempt >= attempt {
				return true
			}
		}
		return false
	}
}

// body is /metrics as text.
func (f *fixture) body() string {
	f.t.Helper()
	resp, err := http.Get(f.http.URL)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		f.t.Fatalf("/metrics: %d %.300s", resp.StatusCode, b)
	}
	return string(b)
}
