package commands

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/interpreter/engine"
)

// A start with a 32,000-byte workflow id over the control socket of a process holding a real
// database is refused (invalid_id), and the next start on the same engine succeeds: the id
// used to reach boltstore, whose refusal stopped the engine.
func TestLongIDOverControlSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	spec := filepath.Join(t.TempDir(), "w.wend.yaml")
	src := "wend: v1\nname: w\nsteps: [{wait_for_signal: go}]\n"
	if err := os.WriteFile(spec, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	d, err := startDriver(e, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	rem, err := dialControl(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	ctx := context.Background()
	_, err = rem.Start(ctx, engine.StartRequest{WorkflowID: strings.Repeat("x", 32_000), SpecFile: spec, Source: src})
	if !errors.Is(err, engine.ErrBadID) || !strings.Contains(err.Error(), "the workflow id is 32000 bytes, over the limit of 255") {
		t.Fatalf("long id: %v", err)
	}
	st, err := rem.Start(ctx, engine.StartRequest{WorkflowID: "w1", SpecFile: spec, Source: src})
	if err != nil || !st.Started {
		t.Fatalf("start after the refusal: %+v %v", st, err)
	}
	if err := d.Engine.Err(); err != nil {
		t.Fatalf("engine stopped: %v", err)
	}
}

// wend run and wend signal refuse an input or signal data over 2 MiB before they send it:
// exit 2, naming the limit, and nothing is created.
func TestCLIPayloadLimit(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "wend.db")
	spec := filepath.Join(dir, "w.wend.yaml")
	big := filepath.Join(dir, "big.json")
	data := `"` + strings.Repeat("x", 3<<20) + `"`
	if err := os.WriteFile(spec, []byte("wend: v1\nname: w\nsteps: [{wait_for_signal: go}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--detach", "--input-file", big, spec}, "wend run: the input is 3145730 bytes, over the limit of 2097152 (2 MiB)\n"},
		{[]string{"signal", "w", "go", "--data", data}, "wend signal: --data: the signal data is 3145730 bytes, over the limit of 2097152 (2 MiB)\ntry: wend help signal\n"},
	} {
		var stderr strings.Builder
		e := &env{stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := run(e, append(tc.args, "--db", db)); code != exitUsage || stderr.String() != tc.want {
			t.Errorf("wend %s: exit %d, stderr %q\nwant exit 2, %q", tc.args[0], code, stderr.String(), tc.want)
		}
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("database made for a refused request: %v", err)
	}
}

// Ids a database written before the edge checks may hold reach the terminal escaped in list
// and show, never as raw escapes.
func TestListShowEscapeIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	st, err := openStore(path)
	if err != nil {
		t.Fatal(err)
	}
	id := "evil\x1b[2J\x1b]0;pwned\x07\nid"
	u := storetest.Started(id, "r1", time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC))
	u.Run.Name = "name\x1b[31m"
	if err := st.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, args := range [][]string{{"list"}, {"show", "r1"}} {
		var out, errs strings.Builder
		e := &env{stdout: &out, stderr: &errs, getenv: func(string) string { return "" }}
		if code := run(e, append(args, "--db", path)); code != exitOK {
			t.Fatalf("wend %s: exit %d: %s", args[0], code, errs.String())
		}
		if strings.ContainsAny(out.String(), "\x1b\x07") || !strings.Contains(out.String(), `evil\x1b[2J\x1b]0;pwned\a\nid`) {
			t.Errorf("wend %s printed:\n%q", args[0], out.String())
		}
	}
}

// wend run's progress lines escape what the history and plugins put in them.
func TestProgressEscapes(t *testing.T) {
	var out strings.Builder
	p := newProgress(&out)
	run := history.Run{WorkflowID: "w\x1b[2J", RunID: "r1"}
	fail := history.Closed{Failure: &history.Failure{Category: history.CategoryActivity, Message: "boom\x1b]0;title\x07"}}
	p.observe(run, history.Event{Type: history.WorkflowFailed, Data: history.MustData(fail)})
	if got := out.String(); strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `w\x1b[2J`) || !strings.Contains(got, `boom\x1b]0;title\a`) {
		t.Fatalf("progress printed %q", got)
	}
}
