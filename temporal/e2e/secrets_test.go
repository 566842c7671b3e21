//go:build unix

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const secretFlow = `wend: v1
name: secret_echo
secrets:
  token: {env: E2E_API_TOKEN}
plugins:
  demo: ./plugins/demo/demo
steps:
  - id: call
    activity: demo.echo
    with: {auth: "Bearer ${{ secrets.token }}"}
output: "${{ steps.call.output }}"
`

// TestSecretsOnTemporal: on a cluster the worker's plugin host reads a declared secret from
// its own environment and puts it in the call; the plugin echoes it back, and what Temporal
// stores (its database file, every payload of the run's history), the CLI's output, the
// export and the worker's log hold the reference or *** only, never the value.
func TestSecretsOnTemporal(t *testing.T) {
	const secret = "e2e-s3cr3t-9f41c"
	queue := "secrets"
	w := startProcEnv(t, "cacheless: ready", []string{"E2E_API_TOKEN=" + secret}, env.worker,
		"--temporal", env.addr, "--task-queue", queue, "--state", filepath.Join(t.TempDir(), "worker"))
	file := filepath.Join(env.examples, "secret-echo.wend.yaml")
	if err := os.WriteFile(file, []byte(secretFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(file)
	tc := func(args ...string) result {
		return cli(t, 2*time.Minute, env.wendTemporal, append(args, "--temporal", env.addr)...)
	}
	run := tc("run", file, "--id", "secret-e2e", "--task-queue", queue)
	if run.code != 0 {
		t.Fatalf("run: exit %d\n%s", run.code, run.stderr)
	}
	if got := strings.TrimSpace(run.stdout); got != `{"auth":"Bearer ***"}` {
		t.Errorf("output %s, want the echoed secret masked", got)
	}
	seen := map[string][]byte{"run stdout": []byte(run.stdout), "run stderr": []byte(run.stderr)}
	for _, args := range [][]string{{"history", "secret-e2e", "--json"}, {"show", "secret-e2e"}} {
		r := tc(args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", args[0], r.code, r.stderr)
		}
		seen[args[0]] = []byte(r.stdout + r.stderr)
	}
	if !bytes.Contains(seen["history"], []byte("${{ secrets.token }}")) {
		t.Errorf("the export lacks the secret's reference:\n%s", seen["history"])
	}
	w.stop(t)
	seen["worker log"] = w.stderr.Bytes()
	// Temporal's own store: the SQLite file and its write-ahead log hold every payload.
	files, _ := filepath.Glob(filepath.Join(env.dir, "temporal.db*"))
	if len(files) == 0 {
		t.Fatal("no Temporal database file to scan")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seen[f] = b
	}
	for where, b := range seen {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the secret's value is in %s", where)
		}
	}
}
