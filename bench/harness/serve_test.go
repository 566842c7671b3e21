package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// The test binary stands in for wend when fakeEnv is set: `serve --db DB ...` answers the
// routes Start and Run use on DB.sock, as many workflows registered as fakeEnv says, and
// exits 0 on SIGTERM; fakeEnv=die exits 3 at once.
const fakeEnv = "HARNESS_FAKE_SERVE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServe(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeServe(mode string, args []string) int {
	fmt.Println("fake serve", strings.Join(args, " "))
	if mode == "die" || len(args) < 3 || args[0] != "serve" || args[1] != "--db" {
		return 3
	}
	workflows, _ := strconv.Atoi(mode)
	l, err := net.Listen("unix", args[2]+".sock")
	if err != nil {
		fmt.Println(err)
		return 3
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"status": "ok", "engine": true})
	})
	mux.HandleFunc("GET /v1/workflows", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"workflows": make([]api.Workflow, workflows)})
	})
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		var req api.StartRequest
		json.NewDecoder(r.Body).Decode(&req)
		if req.WorkflowID == "taken" { // a run of that id exists: answered, not started
			json.NewEncoder(w).Encode(api.Started{Started: false})
			return
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(api.Started{Started: true})
	})
	mux.HandleFunc("GET /v1/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		var d api.RunDetail
		switch r.PathValue("id") {
		case "waiting":
			d.Waits = []api.Wait{{Kind: "timer"}, {Kind: "signal"}}
		case "busy":
			d.Waits = []api.Wait{{Kind: "activity"}}
		}
		json.NewEncoder(w).Encode(d)
	})
	mux.HandleFunc("GET /v1/runs/{id}/wait", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(api.Outcome{Run: history.Run{Status: history.StatusCompleted}, Closed: true})
	})
	go http.Serve(l, mux)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	<-sigs
	l.Close()
	return 0
}

// start starts the test binary as a fake wend serve in mode.
func start(t *testing.T, mode string, o Options) (*Serve, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o.Bin, o.DB, o.Log = exe, dir+"/w.db", dir+"/serve.log"
	o.Env = append(os.Environ(), fakeEnv+"="+mode)
	s, err := Start(o)
	if s != nil {
		t.Cleanup(s.Kill)
	}
	return s, err
}

func TestStartRunStop(t *testing.T) {
	s, err := start(t, "2", Options{Workflows: 2, Flags: []string{"--workflows", "flows"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Ready <= 0 || s.State() != nil {
		t.Fatalf("ready after %v, state %v", s.Ready, s.State())
	}
	if err := s.Run(context.Background(), "r1", "seq", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := s.State(); st == nil || st.ExitCode() != 0 {
		t.Fatalf("state after stop: %v", st)
	}
	if !strings.Contains(s.Tail(), "--http off --workflows flows") {
		t.Fatalf("the log does not show the command line: %s", s.Tail())
	}
}

// Start answers whether the run started; WaitsForSignal reads the run's waits.
func TestStartAndWaitsForSignal(t *testing.T) {
	s, err := start(t, "0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background(), "r1", "seq", nil); err != nil {
		t.Fatalf("start of a new id: %v", err)
	}
	if err := s.Start(context.Background(), "taken", "seq", nil); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("start of a taken id: %v, want not started", err)
	}
	for id, want := range map[string]bool{"waiting": true, "busy": false, "new": false} {
		if got, err := s.WaitsForSignal(id); err != nil || got != want {
			t.Errorf("WaitsForSignal(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
}

func TestStartFails(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		o          Options
		err        string
	}{
		{"exits before ready", "die", Options{}, "wend serve exited before it was ready: exit status 3"},
		// Within 3s the fake has started (and then says why it is not ready) on a loaded machine.
		{"workflows never registered", "1", Options{Workflows: 2, ReadyWithin: 3 * time.Second}, "wend serve not ready after 3s: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := start(t, tc.mode, tc.o)
			if s != nil || err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "serve.log (end)") {
				t.Fatalf("%v, want %q with the log's tail", err, tc.err)
			}
		})
	}
}
