package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// TestTemporalTarget: which command lines name a cluster, what the flags leave to the
// command, and the mistakes caught before any dial.
func TestTemporalTarget(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		want    *Temporal
		rest    string
		wantErr string
	}{
		{name: "local", args: []string{"ID", "--json"}, rest: "ID --json"},
		{name: "flag", args: []string{"ID", "--temporal", "h:1", "--json"}, want: &Temporal{"h:1", "default", "wend"}, rest: "ID --json"},
		{name: "equals forms", args: []string{"-temporal=h:1", "--namespace=n", "-task-queue", "q", "ID"}, want: &Temporal{"h:1", "n", "q"}, rest: "ID"},
		{name: "env", args: []string{"ID"}, env: map[string]string{"WEND_TEMPORAL": "e:2", "WEND_TASK_QUEUE": "tq"}, want: &Temporal{"e:2", "default", "tq"}, rest: "ID"},
		{name: "db beats env", args: []string{"ID", "--db", "x.db"}, env: map[string]string{"WEND_TEMPORAL": "e:2"}, rest: "ID --db x.db"},
		{name: "flag beats env", args: []string{"--temporal", "h:1"}, env: map[string]string{"WEND_TEMPORAL": "e:2"}, want: &Temporal{"h:1", "default", "wend"}},
		{name: "after --", args: []string{"--", "--temporal", "h:1"}, rest: "-- --temporal h:1"},
		{name: "no value", args: []string{"ID", "--temporal"}, wantErr: "flag needs an argument: -temporal"},
		{name: "empty value", args: []string{"--temporal="}, wantErr: "--temporal needs HOST:PORT"},
		{name: "db and temporal", args: []string{"--temporal", "h:1", "--db", "x"}, wantErr: "give --db or --temporal, not both"},
		{name: "namespace alone", args: []string{"--namespace", "n"}, wantErr: "--namespace names a Temporal setting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, rest, err := temporalTarget(c.args, func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
				t.Fatalf("target = %+v, want %+v", got, c.want)
			}
			if strings.Join(rest, " ") != c.rest {
				t.Fatalf("rest = %q, want %q", rest, c.rest)
			}
		})
	}
}

// TestExtensionsRouteEngineCommands: with an opener plugged in, --temporal commands read
// from its backend (with the cluster the flags named), added commands run and are listed,
// and commands with no meaning on a cluster say so.
func TestExtensionsRouteEngineCommands(t *testing.T) {
	st := history.NewMemStore()
	rec := history.Run{WorkflowID: "on-cluster", RunID: "r1", Name: "n", Status: history.StatusRunning, StartedAt: time.Unix(0, 0).UTC(), LastSeq: 1}
	if err := st.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{{Run: rec,
		Events: []history.Event{{Seq: 1, Type: history.WorkflowStarted, Time: rec.StartedAt, Data: history.MustData(history.Started{WorkflowID: "on-cluster", RunID: "r1"})}}}}}); err != nil {
		t.Fatal(err)
	}
	var dialed []Temporal
	var workerGot *Temporal
	x := &Extensions{
		OpenTemporal: func(tc Temporal) (Backend, error) {
			dialed = append(dialed, tc)
			return local{server.New(nil, st), func() error { return nil }}, nil
		},
		Commands: map[string]Command{"worker": {Summary: "host runs", Usage: "Usage: wend worker\n", Run: func(io IO, tc *Temporal, args []string) int {
			workerGot = tc
			return 0
		}}},
	}
	do := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(&env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, ext: x}, args)
		return code, out.String(), errb.String()
	}
	if code, out, errs := do("list", "--temporal", "h:7233", "--namespace", "ns"); code != 0 || !strings.Contains(out, "on-cluster") {
		t.Fatalf("list --temporal = %d, %q, %q", code, out, errs)
	}
	if len(dialed) != 1 || dialed[0] != (Temporal{"h:7233", "ns", "wend"}) {
		t.Fatalf("dialed %+v", dialed)
	}
	if code, _, errs := do("list", "--db", t.TempDir()+"/none.db"); code != 0 || !strings.Contains(errs, "no runs") || len(dialed) != 1 {
		t.Fatalf("local list = %d, %q (dialed %d times)", code, errs, len(dialed))
	}
	if code, _, _ := do("worker", "--temporal", "h:1"); code != 0 || workerGot == nil || workerGot.Address != "h:1" {
		t.Fatalf("worker = %d, got %+v", code, workerGot)
	}
	if _, out, _ := do("help"); !strings.Contains(out, "worker     host runs") {
		t.Fatalf("help does not list the added command:\n%s", out)
	}
	if code, _, errs := do("resume", "--temporal", "h:1"); code != exitUsage || !strings.Contains(errs, "wend resume: not available with --temporal") {
		t.Fatalf("resume --temporal = %d, %q", code, errs)
	}
	// migrate --temporal is routed to the cluster (the missing --to file is all it trips on).
	if code, _, errs := do("migrate", "x", "--to", "f.wend.yaml", "--temporal", "h:1"); code != exitUsage || strings.Contains(errs, "not available") || !strings.Contains(errs, "f.wend.yaml") {
		t.Fatalf("migrate --temporal = %d, %q", code, errs)
	}
	if code, _, errs := do("show", "x", "--namespace", "n"); code != exitUsage || !strings.Contains(errs, "give --temporal HOST:PORT") {
		t.Fatalf("show --namespace = %d, %q", code, errs)
	}
}

// recordingActs answers every call with its input wrapped, and counts the calls.
type recordingActs struct{ calls []history.ActivityCall }

func (r *recordingActs) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	r.calls = append(r.calls, c)
	return json.RawMessage(`{"answered":` + string(c.Input) + `}`), nil
}

// TestExtensionsActivitiesAnswerCalls: Extensions.Activities answers the run's activity
// calls in place of the plugins; the plugin the file names is never started (it does not
// even exist), and the run completes on the extension's answers.
func TestExtensionsActivitiesAnswerCalls(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "two.wend.yaml")
	src := "wend: v1\nname: two\nplugins: {p: ./no-such-plugin}\nsteps:\n" +
		"  - {id: a, activity: p.echo, with: {i: 1}}\n  - {id: b, activity: p.echo, with: {i: 2}}\noutput: \"${{ steps.b.output }}\"\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	acts := &recordingActs{}
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, ext: &Extensions{Activities: acts}}
	if code := run(e, []string{"run", file, "--db", filepath.Join(dir, "w.db")}); code != exitOK {
		t.Fatalf("run = %d\n%s", code, errb.String())
	}
	if len(acts.calls) != 2 || acts.calls[0].Activity != "echo" || string(acts.calls[1].Input) != `{"i":2}` {
		t.Fatalf("calls = %+v", acts.calls)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["answered"] == nil {
		t.Fatalf("output %q (%v), want the extension's answer", out.String(), err)
	}
}
