package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// memBackend is a server.Backend over an in-memory store, as a cluster's backend would be.
type memBackend struct {
	*server.Server
	closed *int
}

func (b memBackend) List(q api.ListQuery, limit int) ([]history.Run, error) {
	return b.Server.List(q.StoreFilter())
}

func (b memBackend) Close() error { *b.closed++; return nil }

// do runs the command line with x and returns the exit code, stdout and stderr.
func do(x Extensions, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(x, IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

// TestExtensionsReachTheCommands: what a binary gives through this package's types reaches
// wend's commands: --temporal commands read the opened backend (which they close), an added
// command gets its arguments and cluster and is listed by help, and a name wend has keeps
// wend's command.
func TestExtensionsReachTheCommands(t *testing.T) {
	st := history.NewMemStore()
	rec := history.Run{WorkflowID: "on-cluster", RunID: "r1", Name: "n", Status: history.StatusRunning, StartedAt: time.Unix(0, 0).UTC(), LastSeq: 1}
	if err := st.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: rec,
		Events: []history.Event{{Seq: 1, Type: history.WorkflowStarted, Time: rec.StartedAt,
			Data: history.MustData(history.Started{WorkflowID: "on-cluster", RunID: "r1"})}}}}}); err != nil {
		t.Fatal(err)
	}
	var dialed []Temporal
	closed := 0
	var gotT *Temporal
	var gotArgs []string
	x := Extensions{
		OpenTemporal: func(tc Temporal) (server.Backend, error) {
			dialed = append(dialed, tc)
			return memBackend{server.New(nil, st), &closed}, nil
		},
		Commands: map[string]Command{
			"worker": {Summary: "host runs", Usage: "Usage: wend worker\n", Run: func(sys IO, tc *Temporal, args []string) int {
				gotT, gotArgs = tc, args
				sys.Stdout.Write([]byte("worked\n"))
				return 3
			}},
			"version": {Summary: "not wend's", Run: func(IO, *Temporal, []string) int { return 9 }},
		},
	}
	t.Run("backend", func(t *testing.T) {
		code, out, errs := do(x, "list", "--temporal", "h:7233", "--namespace", "ns")
		if code != 0 || !strings.Contains(out, "on-cluster") {
			t.Fatalf("list --temporal = %d, %q, %q", code, out, errs)
		}
		if len(dialed) != 1 || dialed[0] != (Temporal{"h:7233", "ns", "wend"}) || closed != 1 {
			t.Fatalf("dialed %+v, closed %d times", dialed, closed)
		}
	})
	t.Run("added command", func(t *testing.T) {
		code, out, _ := do(x, "worker", "--temporal", "h:1", "a", "b")
		if code != 3 || out != "worked\n" || gotT == nil || *gotT != (Temporal{"h:1", "default", "wend"}) || strings.Join(gotArgs, " ") != "a b" {
			t.Fatalf("worker = %d, %q, cluster %+v, args %q", code, out, gotT, gotArgs)
		}
		if code, _, _ := do(x, "worker"); code != 3 || gotT != nil {
			t.Fatalf("worker without a cluster = %d, cluster %+v", code, gotT)
		}
	})
	t.Run("help", func(t *testing.T) {
		if _, out, _ := do(x, "help"); !strings.Contains(out, "worker     host runs") {
			t.Fatalf("help does not list the added command:\n%s", out)
		}
	})
	t.Run("wend's name kept", func(t *testing.T) {
		if code, out, _ := do(x, "version"); code != 0 || out == "" {
			t.Fatalf("version = %d, %q: the added command replaced wend's", code, out)
		}
	})
	t.Run("no backend", func(t *testing.T) {
		code, _, errs := do(Extensions{}, "list", "--temporal", "h:1")
		if code == 0 || !strings.Contains(errs, "cannot reach Temporal") {
			t.Fatalf("list --temporal without OpenTemporal = %d, %q", code, errs)
		}
	})
}

// echoActs answers every call with its names and input.
type echoActs struct{ calls int }

func (a *echoActs) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	a.calls++
	return json.Marshal(map[string]any{"by": c.Plugin + "." + c.Activity, "in": c.Input})
}

// TestActivitiesEmbedded: a binary's Go activities answer the calls of the runs it drives;
// the plugin the workflow names is never started (it does not exist).
func TestActivitiesEmbedded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "embed.wend.yaml")
	src := "wend: v1\nname: embed\nplugins: {p: ./no-such-plugin}\nsteps:\n" +
		"  - {id: a, activity: p.greet, with: {name: ada}}\noutput: \"${{ steps.a.output }}\"\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	acts := &echoActs{}
	code, out, errs := do(Extensions{Activities: acts}, "run", file, "--db", filepath.Join(dir, "w.db"))
	if code != 0 || acts.calls != 1 {
		t.Fatalf("run = %d after %d calls\n%s", code, acts.calls, errs)
	}
	if strings.TrimSpace(out) != `{"by":"p.greet","in":{"name":"ada"}}` {
		t.Fatalf("output %q", out)
	}
}

// TestPluginStartTimeout: an added command reads WEND_PLUGIN_START_TIMEOUT as wend's own do.
func TestPluginStartTimeout(t *testing.T) {
	for _, c := range []struct {
		value string
		want  time.Duration
		warns bool
	}{{"", 0, false}, {"30s", 30 * time.Second, false}, {"soon", 0, true}, {"-1s", 0, true}} {
		var errb bytes.Buffer
		got := PluginStartTimeout(IO{Stderr: &errb, Getenv: func(k string) string {
			if k == "WEND_PLUGIN_START_TIMEOUT" {
				return c.value
			}
			return ""
		}})
		if got != c.want || (errb.Len() > 0) != c.warns {
			t.Errorf("%q: %v, stderr %q", c.value, got, errb.String())
		}
	}
}
