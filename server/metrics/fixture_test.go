package metrics

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/enginetest"
)

const (
	failSpec  = servertest.FailSpec
	flakySpec = servertest.FlakySpec
	waitSpec  = servertest.WaitSpec
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
	counted := m.TimeCommits(store)
	<-m.CaughtUp()
	eng := enginetest.New(t, engine.Options{Store: counted, Activities: servertest.Acts{}})
	f := &fixture{t: t, m: m, srv: server.New(eng, store), dir: t.TempDir(), http: httptest.NewServer(m.Handler(store, eng))}
	t.Cleanup(f.http.Close)
	return f
}

func (f *fixture) start(id, src string) history.Run {
	f.t.Helper()
	st, err := f.srv.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(f.dir, id+".wend.yaml"), Source: src,
		Input: json.RawMessage(`{"who":"bo"}`)})
	if err != nil {
		f.t.Fatal(err)
	}
	return st.Run
}

// settle waits until the run of id satisfies cond.
func (f *fixture) settle(id string, cond func(api.RunDetail) bool) {
	f.t.Helper()
	servertest.Settle(f.t, func() (api.RunDetail, error) { return f.srv.Show(id) }, cond)
}

func closed(d api.RunDetail) bool { return !d.Run.Open() }

func waitingFor(kind string, attempt int) func(api.RunDetail) bool {
	return func(d api.RunDetail) bool {
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
