package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server/internal/servertest"
)

const (
	migrateBase = "wend: v1\nname: mig\nsteps: [{id: w, wait_for_signal: go}]\n"
	migrateNext = "wend: v1\nname: mig\nsteps: [{id: w, wait_for_signal: go}, {id: more, wait_for_signal: again}]\n"
)

func migrateBody(t *testing.T, req api.MigrateRequest) string {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMigrateRouteAttacker plays a client of POST /v1/runs/{id}/migrate that should get
// nothing moved: no token or the read token, a file of another workflow, an invalid file, a
// run that does not exist, a body it may not send. None changes the run; the act token's move
// is recorded as the token's, whatever name its body claims.
func TestMigrateRouteAttacker(t *testing.T) {
	f := newWebFixture(t)
	run := f.start("m1", migrateBase)
	path := "/v1/runs/m1/migrate"
	good := migrateBody(t, api.MigrateRequest{Source: migrateNext, By: "mallory"})
	cases := []struct {
		name   string
		r      req
		status int
		want   string // in the body
	}{
		{"no token", req{Method: "POST", Path: path, Body: good}, http.StatusUnauthorized, ""},
		{"the read token", req{Method: "POST", Path: path, Body: good, Header: servertest.ReadBearer()}, http.StatusForbidden, "needs the act token"},
		{"another workflow's file", req{Method: "POST", Path: path, Header: servertest.Bearer(),
			Body: migrateBody(t, api.MigrateRequest{Source: strings.Replace(migrateNext, "name: mig", "name: other", 1)})}, http.StatusBadRequest, "not a text of the run's workflow"},
		{"an invalid file", req{Method: "POST", Path: path, Header: servertest.Bearer(),
			Body: migrateBody(t, api.MigrateRequest{Source: "wend: v1\nname: mig\nsteps: [{bogus: 1}]\n"})}, http.StatusBadRequest, "the workflow file is invalid"},
		{"no text", req{Method: "POST", Path: path, Header: servertest.Bearer(), Body: `{}`}, http.StatusBadRequest, "no workflow text"},
		{"a run that does not exist", req{Method: "POST", Path: "/v1/runs/nope/migrate", Header: servertest.Bearer(), Body: good}, http.StatusNotFound, "nope"},
		{"an unknown field", req{Method: "POST", Path: path, Header: servertest.Bearer(), Body: `{"source":"x","spec_sha256":"forged"}`}, http.StatusBadRequest, "unknown field"},
		{"a text over the body limit", req{Method: "POST", Path: path, Header: servertest.Bearer(),
			Body: migrateBody(t, api.MigrateRequest{Source: migrateNext + "# " + strings.Repeat("x", maxBody) + "\n"})}, http.StatusBadRequest, "request body too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := f.send(c.r)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("status %d %s, want %d with %q", status, body, c.status, c.want)
			}
			evs, _ := f.srv.store.Events(run.RunID, 0)
			for _, ev := range evs {
				if ev.Type == history.WorkflowMigrated {
					t.Fatal("a refused request moved the run")
				}
			}
		})
	}

	status, _, body := f.send(req{Method: "POST", Path: path, Body: good, Header: servertest.Bearer()})
	var res api.MigrateResult
	if status != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil || !res.Moved {
		t.Fatalf("the act token's move: %d %s", status, body)
	}
	evs, _ := f.srv.store.Events(run.RunID, 0)
	m, err := history.DataOf[history.Migration](evs[len(evs)-1])
	if err != nil || evs[len(evs)-1].Type != history.WorkflowMigrated || m.By != "act token" {
		t.Fatalf("last event %s %+v (%v), want WorkflowMigrated by the act token", evs[len(evs)-1].Type, m, err)
	}
	if res.Run.SpecSHA256 != res.ToSHA256 || res.FromSHA256 != run.SpecSHA256 {
		t.Fatalf("result %+v: the run's record must name the new text", res)
	}
}

// TestMigrateSentinels: the engine's refusals reach the API as codes a client can tell apart.
func TestMigrateSentinels(t *testing.T) {
	f := newWebFixture(t)
	f.start("m1", migrateBase)
	f.start("done", "wend: v1\nname: mig\nsteps: [{fail: done}]\n")
	f.settle("done", closed)
	for _, c := range []struct {
		id, src, code string
	}{
		{"done", migrateNext, api.CodeRunClosed},
		{"m1", "wend: v1\nname: other\nsteps: []\n", api.CodeBadWorkflow},
		{"nope", migrateNext, api.CodeNotFound},
	} {
		_, err := f.srv.Migrate(t.Context(), c.id, api.MigrateRequest{Source: c.src})
		var se *api.Error
		if !errors.As(err, &se) || se.Code != c.code {
			t.Errorf("%s: %v, want code %s", c.id, err, c.code)
		}
	}
}

// batchRecorder is a BatchRunner that keeps the request it was given.
type batchRecorder struct{ got *api.BatchRequest }

func (b batchRecorder) Create(req api.BatchRequest) (api.Batch, bool, error) {
	*b.got = req
	return api.Batch{ID: "b", Request: req, Status: api.BatchCompleted}, true, nil
}
func (batchRecorder) Get(string) (api.Batch, error)    { return api.Batch{}, nil }
func (batchRecorder) List() []api.Batch                { return nil }
func (batchRecorder) Cancel(string) (api.Batch, error) { return api.Batch{}, nil }
func (batchRecorder) Runs(string) bool                 { return true }

// TestMigrateBatchRecordsTheToken: a migrate batch sent with a token records the token as who
// asked, whatever name its body gives; the read token cannot send one.
func TestMigrateBatchRecordsTheToken(t *testing.T) {
	f := newWebFixture(t)
	var got api.BatchRequest
	f.srv.SetBatches(batchRecorder{&got})
	body := `{"operation":"migrate","where":"name = mig","migrate":{"source":"x","by":"root"}}`
	if status, _, b := f.send(req{Method: "POST", Path: "/v1/batches", Body: body, Header: servertest.ReadBearer()}); status != http.StatusForbidden {
		t.Fatalf("read token: %d %s", status, b)
	}
	if got.Migrate != nil {
		t.Fatal("a refused request reached the runner")
	}
	if status, _, b := f.send(req{Method: "POST", Path: "/v1/batches", Body: body, Header: servertest.Bearer()}); status != http.StatusCreated {
		t.Fatalf("act token: %d %s", status, b)
	}
	if got.Migrate == nil || got.Migrate.By != "act token" {
		t.Fatalf("the runner got %+v, want the act token as who asked", got.Migrate)
	}
}
