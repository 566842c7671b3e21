package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
)

// killedServe is a serve's life over path in two processes' worth: runs, a scrape and a clean
// close (what it kept is durable); then, opened again, more runs, a scrape (kept in the
// store's open transaction), more runs, and a kill -9 of itself.
func killedServe(path string) error {
	dir, err := os.MkdirTemp("", "wend-metrics-helper")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	open := func() (*Metrics, history.Store, *engine.Engine, *server.Server, error) {
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			return nil, nil, nil, nil, err
		}
		m := New("")
		ts := m.TimeCommits(st)
		<-m.CaughtUp()
		eng := engine.New(engine.Options{Store: ts, Activities: servertest.Acts{}})
		if _, err := eng.Recover(context.Background()); err != nil {
			return nil, nil, nil, nil, err
		}
		return m, ts, eng, server.New(eng, st), nil
	}
	run := func(srv *server.Server, id, src string, cond func(api.RunDetail) bool) error {
		if _, err := srv.Start(context.Background(), engine.StartRequest{WorkflowID: id, SpecFile: filepath.Join(dir, id+".wend.yaml"),
			Source: src, Input: json.RawMessage(`{"who":"bo"}`)}); err != nil {
			return err
		}
		for range 2000 {
			if d, err := srv.Show(id); err == nil && cond(d) {
				return nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return fmt.Errorf("run %s did not settle", id)
	}
	scrape := func(m *Metrics, ts history.Store, eng *engine.Engine) error {
		rec := httptest.NewRecorder()
		m.Handler(ts, eng).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			return fmt.Errorf("scrape: %d %.300s", rec.Code, rec.Body)
		}
		return nil
	}

	m, ts, eng, srv, err := open()
	if err != nil {
		return err
	}
	if err := run(srv, "f1", failSpec, closed); err != nil {
		return err
	}
	if err := run(srv, "w1", waitSpec, waitingFor(runview.WaitSignal, 0)); err != nil {
		return err
	}
	if err := scrape(m, ts, eng); err != nil {
		return err
	}
	eng.Close()
	if err := ts.Close(); err != nil {
		return err
	}

	if m, ts, eng, srv, err = open(); err != nil {
		return err
	}
	if err := run(srv, "f2", failSpec, closed); err != nil {
		return err
	}
	if err := run(srv, "d1", delaySpec, waitingFor(runview.WaitTimer, 0)); err != nil {
		return err
	}
	if err := scrape(m, ts, eng); err != nil {
		return err
	}
	if err := run(srv, "f3", failSpec, closed); err != nil {
		return err
	}
	if err := run(srv, "k1", flakySpec, waitingFor(runview.WaitActivity, 2)); err != nil {
		return err
	}
	fmt.Println("ready")
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		return err
	}
	if err := self.Kill(); err != nil {
		return err
	}
	select {}
}

// Killed with -9 (a real process, its last scrape's sum kept in the open transaction and
// commits after it), a serve's database gives the next serve the sum kept at the last
// checkpoint: TimeCommits reads the runs changed since, before the engine commits, and every
// scrape after reads no run and equals a whole read, as runs open across the kill go on and
// closed ones are purged.
func TestScrapesReadNoRunAcrossAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a process")
	}
	path := filepath.Join(t.TempDir(), "wend.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=killed", helperDB+"="+path)
	cmd.Stderr = os.Stderr
	out, _ := cmd.Output()
	if string(out) != "ready\n" {
		t.Fatalf("the killed serve said %q", out)
	}
	s := serveAt(t, path)
	t.Cleanup(s.close)
	if s.caughtUp == 0 { // f3 and k1 committed after the last scrape kept the sum
		t.Error("the serve after the kill read no run to catch up with the commits after the last kept sum")
	}
	got := s.compare("first scrape after the kill")
	if got[`wend_runs{status="failed",workflow="failing"}`] != 3 {
		t.Fatalf("failed runs after the kill: %v, want 3", got[`wend_runs{status="failed",workflow="failing"}`])
	}
	if _, err := s.srv.Signal(context.Background(), "w1", "approve", nil); err != nil {
		t.Fatal(err)
	}
	s.settle("w1", closed)
	if _, err := s.srv.Cancel(context.Background(), "k1", "enough"); err != nil {
		t.Fatal(err)
	}
	s.settle("k1", closed)
	s.compare("runs open across the kill, closed")
	f1, err := s.srv.Show("f1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.PurgeRuns(context.Background(), []string{f1.Run.RunID}, nil); err != nil {
		t.Fatal(err)
	}
	s.compare("after a purge")
}
