package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// buildDemo builds the example Go plugin once for the scripts ($DEMO), so workflows in
// them can call real activities in a real plugin process.
func buildDemo(t *testing.T) string {
	t.Helper()
	return buildOnce(t, "demo", "./examples/plugins/demo")
}

// scriptCmds are the commands the scripts add to testscript's.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(*testscript.TestScript, bool, []string){"eventually": cmdEventually, "jsonlines": cmdJSONLines, "nosecret": cmdNoSecret, "orderapi": cmdOrderAPI,
		"nosecretforms": cmdNoSecretForms, "leakyapi": cmdLeakyAPI,
		"stdoutenv": cmdStdoutEnv, "freeport": cmdFreePort, "httpcall": cmdHTTPCall}
}

// cmdEventually runs a command again and again until its stdout matches a pattern:
//
//	eventually 'signal "approve"' wend show order-1
//
// It is how a script waits for a background process to reach a state (a run waiting for a
// signal) without sleeping a fixed time. It gives up after 30 seconds.
func cmdEventually(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: eventually PATTERN COMMAND [ARGS...]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ts.Exec(args[1], args[2:]...) == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("eventually: %q never matched the stdout of %v", args[0], args[1:])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A database held by a process that serves no socket: the command gives up after a while
// with an error naming the holder's pid and the socket, instead of hanging.
func TestOpenBackendUnreachableHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	st, err := openStore(path) // this process holds the file now; no socket is served
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer func(d time.Duration) { connectWait = d }(connectWait)
	connectWait = 0
	_, err = openBackend(&env{}, path, readRuns)
	if err == nil {
		t.Fatal("openBackend on a held database without a socket succeeded")
	}
	want := fmt.Sprintf("is in use by another wend process (pid %d), and its control socket %s.sock does not answer", os.Getpid(), path)
	if !strings.Contains(err.Error(), want) || !errors.Is(err, boltstore.ErrInUse) {
		t.Fatalf("error %q\nwant it to contain %q and wrap ErrInUse", err, want)
	}
}

// Local and remote backends answer alike: the same detail, the same error text and code.
func TestBackendsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	spec := filepath.Join(t.TempDir(), "w.wend.yaml")
	if err := os.WriteFile(spec, []byte("wend: v1\nname: w\nsteps: [{wait_for_signal: go}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	d, err := startDriver(e, path)
	if err != nil {
		t.Fatal(err)
	}
	if d.ctl == nil {
		t.Fatal("no control socket")
	}
	loc := local{server.New(d.Engine, d.Store), func() error { return nil }}
	rem, err := dialControl(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	src, _ := os.ReadFile(spec)
	st, err := rem.Start(context.Background(), engine.StartRequest{WorkflowID: "w1", SpecFile: spec, Source: string(src)})
	if err != nil || !st.Started {
		t.Fatalf("remote start: %+v %v", st, err)
	}
	for _, b := range []backend{loc, rem} {
		det, err := b.Show("w1")
		if err != nil || len(det.Waits) != 1 || det.Waits[0].Signal != "go" {
			t.Fatalf("%T show: %+v %v", b, det.Waits, err)
		}
		_, err = b.Show("nope")
		var se *api.Error
		if !errors.As(err, &se) || se.Code != api.CodeNotFound || se.Message != `no workflow or run "nope"` {
			t.Fatalf("%T show nope: %#v", b, err)
		}
	}
	if _, err := rem.Signal(context.Background(), "w1", "go", nil); err != nil {
		t.Fatal(err)
	}
	o, err := rem.Wait(context.Background(), "w1", 5*time.Second)
	if err != nil || !o.Closed || o.Run.Status != history.StatusCompleted {
		t.Fatalf("remote wait: %+v %v", o, err)
	}
	_, lerr := loc.Signal(context.Background(), "w1", "go", nil)
	_, rerr := rem.Signal(context.Background(), "w1", "go", nil)
	if lerr == nil || rerr == nil || lerr.Error() != rerr.Error() || !errors.Is(rerr, engine.ErrRunClosed) {
		t.Fatalf("closed-run errors differ: local %v, remote %v", lerr, rerr)
	}
	d.close()
	if _, err := os.Lstat(socketPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after close: %v", err)
	}
}
