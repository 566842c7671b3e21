package commands

import (
	"bytes"
	"os"
	"testing"
)

// wend graph exits 0 when it prints, 2 on a usage mistake and 1 on a file that is not a
// valid workflow.
func TestGraphExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"graph", "../../examples/order.wend.yaml"}, exitOK},
		{[]string{"graph", "--format", "svg", "../../examples/order.wend.yaml"}, exitOK},
		{[]string{"graph", "--format", "png", "../../examples/order.wend.yaml"}, exitUsage},
		{[]string{"graph"}, exitUsage},
		{[]string{"graph", "a", "b"}, exitUsage},
		{[]string{"graph", "no-such.wend.yaml"}, exitFailed},
		{[]string{"graph", "../../README.md"}, exitFailed},
	} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, getenv: os.Getenv}
		if got := run(e, tc.args); got != tc.want {
			t.Errorf("wend %v: exit %d, want %d; stderr %s", tc.args, got, tc.want, errb.String())
		}
	}
}
