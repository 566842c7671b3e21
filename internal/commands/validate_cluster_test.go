package commands

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

const clusterSpec = "wend: v1\nname: order\nsteps:\n  - {id: first, wait_for_signal: one}\n  - {id: second, wait_for_signal: go}\n"

// listedBackend is a cluster's backend that records the workflows it is asked to list.
type listedBackend struct {
	Backend
	closed bool
}

func (b *listedBackend) Close() error { b.closed = true; return nil }

// TestValidateAgainstCluster: wend validate --against temporal reads the open runs of the
// cluster --temporal names through its backend (list, then each run's export) and replays
// them on the files, as from a database; without a cluster named it says how to name one, and
// cluster flags without --against temporal are refused rather than ignored.
func TestValidateAgainstCluster(t *testing.T) {
	_, srv := apptest.Over(t, history.NewMemStore(), nil)
	dir := t.TempDir()
	if _, err := srv.Start(context.Background(), engine.StartRequest{WorkflowID: "o1", SpecFile: filepath.Join(dir, "run.wend.yaml"), Source: clusterSpec}); err != nil {
		t.Fatal(err)
	}
	waitsFor := func(signal string) {
		deadline := time.Now().Add(time.Minute)
		for d, err := srv.Show("o1"); err != nil || len(d.Waits) == 0 || d.Waits[0].Signal != signal; d, err = srv.Show("o1") {
			if time.Now().After(deadline) {
				t.Fatalf("o1 never waits for %s: %+v %v", signal, d, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitsFor("one")
	if _, err := srv.Signal(context.Background(), "o1", "one", nil); err != nil {
		t.Fatal(err)
	}
	waitsFor("go") // past its first step
	b := &listedBackend{Backend: local{srv, func() error { return nil }}}
	var asked []Temporal
	x := &Extensions{OpenTemporal: func(tc Temporal) (Backend, error) { asked = append(asked, tc); return b, nil }}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	same := write("same.wend.yaml", clusterSpec)
	added := write("added.wend.yaml", clusterSpec+"  - {id: third, wait_for_signal: more}\n")
	inserted := write("inserted.wend.yaml", strings.Replace(clusterSpec, "steps:\n", "steps:\n  - {id: zero, wait_for_signal: zero}\n", 1))
	cases := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		out    string // a regexp stdout matches
		errs   string // a regexp stderr matches
		opened bool
		ns     string // the namespace the cluster is opened with
	}{
		{name: "holds", args: []string{"--against", "temporal", "--temporal", "h:7233", same, added}, code: exitOK, opened: true,
			out:  `(?m)^o1 \(run [0-9a-f]{16}\): holds: .*same.wend.yaml takes the same decisions on its history so far\no1 \(run [0-9a-f]{16}\): holds: .*added.wend.yaml`,
			errs: `(?m)^validate --against: 2 open runs checked: 2 hold, 0 would break$`},
		{name: "breaks", args: []string{"--against=temporal", "--temporal=h:7233", "--namespace", "ops", inserted}, code: exitFailed, opened: true, ns: "ops",
			out: `(?m)^o1 \(run [0-9a-f]{16}\): breaks at event 3, step zero at .*inserted.wend.yaml:4:5 \(where the run had step first\): `},
		{name: "cluster from the environment", args: []string{"--against", "temporal", added}, env: map[string]string{"WEND_TEMPORAL": "h:7233"}, code: exitOK, opened: true,
			out: `holds`},
		{name: "no cluster named", args: []string{"--against", "temporal", same}, code: exitUsage,
			errs: `(?m)^wend validate: --against temporal reads the open runs of a Temporal cluster: name it with --temporal HOST:PORT \(or WEND_TEMPORAL\); a file named temporal is \./temporal$`},
		{name: "cluster flag without --against temporal", args: []string{"--temporal", "h:7233", same}, code: exitUsage,
			errs: `(?m)^wend validate: --temporal names a Temporal cluster; validate reads its open runs with --against temporal --temporal HOST:PORT$`},
		{name: "WEND_TEMPORAL alone leaves validate off the network", args: []string{same}, env: map[string]string{"WEND_TEMPORAL": "h:7233"}, code: exitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			asked, b.closed = nil, false
			var out, errb bytes.Buffer
			code := run(&env{stdout: &out, stderr: &errb, getenv: func(k string) string { return c.env[k] }, ext: x}, append([]string{"validate"}, c.args...))
			if code != c.code || !regexp.MustCompile(c.out).MatchString(out.String()) || !regexp.MustCompile(c.errs).MatchString(errb.String()) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errb.String())
			}
			if got := len(asked) > 0; got != c.opened {
				t.Fatalf("cluster opened: %v (%+v), want %v", got, asked, c.opened)
			}
			if c.opened && (asked[0].Address != "h:7233" || c.ns != "" && asked[0].Namespace != c.ns || !b.closed) {
				t.Fatalf("opened %+v, closed %v", asked[0], b.closed)
			}
		})
	}
}

// TestValidateHandsOffOnlyForTheCluster: the plain wend hands validate to wend-temporal only
// when it reads a named cluster's open runs; WEND_TEMPORAL alone (a pre-commit hook in a
// shell that has it) leaves validate here, off the network.
func TestValidateHandsOffOnlyForTheCluster(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "WEND_TEMPORAL" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"validate", "--against", "temporal", "--temporal", "h:7233", "f.wend.yaml"}, "", true},
		{[]string{"validate", "--against=temporal", "f.wend.yaml"}, "h:7233", true},
		{[]string{"validate", "--against", "temporal", "f.wend.yaml"}, "", false},
		{[]string{"validate", "f.wend.yaml"}, "h:7233", false},
		{[]string{"validate", "--against", "exports", "f.wend.yaml"}, "h:7233", false},
		{[]string{"validate", "--temporal", "h:7233", "f.wend.yaml"}, "", false},
		{[]string{"validate", "--", "--against", "temporal"}, "h:7233", false},
	} {
		if got := wantsTemporal(c.args, env(c.env)); got != c.want {
			t.Errorf("%q with WEND_TEMPORAL=%q: hands off %v, want %v", c.args, c.env, got, c.want)
		}
	}
}
