package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// A start with a 32,000-byte workflow id over the control socket of a process holding a real
// database is refused (invalid_id), and the next start on the same engine succeeds: the id
// used to reach boltstore, whose refusal stopped the engine.
func TestLongIDOverControlSocketIssue12Item5(t *testing.T) {
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
	_, err = rem.Start(ctx, server.StartRequest{WorkflowID: strings.Repeat("x", 32_000), SpecFile: spec, Source: src})
	if !errors.Is(err, engine.ErrBadID) || !strings.Contains(err.Error(), "the workflow id is 32000 bytes, over the limit of 255") {
		t.Fatalf("long id: %v", err)
	}
	st, err := rem.Start(ctx, server.StartRequest{WorkflowID: "w1", SpecFile: spec, Source: src})
	if err != nil || !st.Started {
		t.Fatalf("start after the refusal: %+v %v", st, err)
	}
	if err := d.eng.Err(); err != nil {
		t.Fatalf("engine stopped: %v", err)
	}
}

// wend run and wend signal refuse an input or signal data over 2 MiB before they send it:
// exit 2, naming the limit, and nothing is created.
func TestCLIPayloadLimitIssue12Item6(t *testing.T) {
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
