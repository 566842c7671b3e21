package commands

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryExitCodes: wend query exits 2 for a bad command line (an expression that does not
// compile or is over its limit, checked before any database is opened) and 1 for a run
// that does not exist.
func TestQueryExitCodes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "wend.db")
	for _, c := range []struct {
		args []string
		want int
		frag string
	}{
		{[]string{"query", "--db", db}, exitUsage, "want a workflow or run ID and an expression"},
		{[]string{"query", "--db", db, "w", "inptu.x"}, exitUsage, `unknown name inptu (did you mean "input"?)`},
		{[]string{"query", "--db", db, "w", strings.Repeat("1", 4097)}, exitUsage, "over the 4096-byte limit"},
		{[]string{"query", "--db", db, "w", "input.x"}, exitFailed, `no workflow or run "w"`},
	} {
		var stderr strings.Builder
		e := &env{stdout: &stderr, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := run(e, c.args); code != c.want || !strings.Contains(stderr.String(), c.frag) {
			t.Errorf("%v: exit %d, %q; want %d with %q", c.args[3:], code, stderr.String(), c.want, c.frag)
		}
	}
}
