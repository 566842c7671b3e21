//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const contractFlow = `wend: v1
name: contract
signals:
  approve:
    schema: {type: object, required: [by], properties: {by: {type: string}}}
steps:
  - id: greet
    wait_for_signal: approve
    set: {by: "${{ signal.by }}"}
  - id: second
    wait_for_signal: approve
output: "${{ state.by }}"
`

// TestSignalsAndQueryOnTemporal: on a cluster, as locally, a signal the workflow does not
// declare or data its schema refuses is refused before signalling (exit 1, the run's
// history unchanged); a resend with a delivered signal id says so, open
// run or closed; and wend query answers from the run's state and step outputs.
func TestSignalsAndQueryOnTemporal(t *testing.T) {
	w := startWorker(t, "wend", filepath.Join(t.TempDir(), "worker"))
	defer w.stop(t)
	file := filepath.Join(t.TempDir(), "contract.wend.yaml")
	if err := os.WriteFile(file, []byte(contractFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	tc := func(args ...string) result {
		return cli(t, time.Minute, env.wendTemporal, append(args, "--temporal", env.addr)...)
	}
	if r := tc("run", file, "--id", "sig-e2e", "--detach"); r.code != 0 {
		t.Fatalf("run --detach: %d %s", r.code, r.stderr)
	}
	history := func() string {
		t.Helper()
		r := tc("history", "sig-e2e")
		if r.code != 0 {
			t.Fatalf("history: %d %s", r.code, r.stderr)
		}
		return r.stdout
	}
	// Wait for the start to be recorded before comparing histories.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(history(), "WorkflowStarted") {
		if time.Now().After(deadline) {
			t.Fatal("the run did not start within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := history()

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"signal", "sig-e2e", "aprove", "--data", `{"by":"ann"}`}, `signal "aprove" is not declared by workflow contract (did you mean "approve"?)`},
		{[]string{"signal", "sig-e2e", "approve", "--data", `{"who":"ann"}`}, `data.by: missing required property`},
		{[]string{"query", "sig-e2e", "steps.greet.output"}, `step "greet" has no output`},
	} {
		if r := tc(c.args...); r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Fatalf("%v: exit %d, stderr %q; want 1 with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if r := tc("query", "sig-e2e", "inptu"); r.code != 2 || !strings.Contains(r.stderr, "unknown name inptu") {
		t.Fatalf("bad query: exit %d, stderr %q", r.code, r.stderr)
	}
	if after := history(); after != before {
		t.Fatalf("refused signals changed the history:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	if r := tc("signal", "sig-e2e", "approve", "--data", `{"by":"ann"}`, "--id", "s-1"); r.code != 0 || !strings.Contains(r.stdout, `signal "approve" sent to run`) {
		t.Fatalf("first send: %d %q %q", r.code, r.stdout, r.stderr)
	}
	dup := regexp.MustCompile(`^signal "approve" with id s-1 was already delivered to sig-e2e; not sent again \(run \S+ is (running|completed)\)\n$`)
	// The workflow records s-1 when its task runs: until then the resend may still be sent
	// (and dropped by the workflow); it answers duplicate once the history has it.
	deadline = time.Now().Add(time.Minute)
	for {
		r := tc("signal", "sig-e2e", "approve", "--data", `{"by":"ann"}`, "--id", "s-1")
		if r.code != 0 {
			t.Fatalf("resend: %d %q", r.code, r.stderr)
		}
		if dup.MatchString(r.stdout) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("resend never answered duplicate: %q", r.stdout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := tc("query", "sig-e2e", `{"by": state.by, "greet": steps.greet.output.by}`); r.code != 0 || r.stdout != `{"by":"ann","greet":"ann"}`+"\n" {
		t.Fatalf("query: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := tc("signal", "sig-e2e", "approve", "--data", `{"by":"bo"}`, "--id", "s-2"); r.code != 0 {
		t.Fatalf("second signal: %d %q", r.code, r.stderr)
	}
	if r := tc("wait", "sig-e2e"); r.code != 0 || strings.TrimSpace(r.stdout) != `"ann"` {
		t.Fatalf("wait: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// Closed: a resend of a delivered id is still a duplicate; a new one is refused.
	if r := tc("signal", "sig-e2e", "approve", "--data", `{"by":"bo"}`, "--id", "s-2"); r.code != 0 || !strings.Contains(r.stdout, "is completed)") {
		t.Fatalf("resend to the closed run: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := tc("signal", "sig-e2e", "approve", "--data", `{"by":"cy"}`, "--id", "s-3"); r.code != 1 || !strings.Contains(r.stderr, "signals to a finished run are rejected") {
		t.Fatalf("new signal to the closed run: %d %q", r.code, r.stderr)
	}
	if r := tc("query", "sig-e2e", "steps.second.output.by"); r.code != 0 || r.stdout != `"bo"`+"\n" {
		t.Fatalf("query of the closed run: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
