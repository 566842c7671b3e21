package commands

import (
	"strings"
	"testing"
)

// TestParseWhereNamesTheFlag: the filter's own errors are server.ParseWhere's (tested there);
// here they name --where.
func TestParseWhereNamesTheFlag(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"", "--where: empty filter"},
		{"stauts = running", `--where: unknown key "stauts" (did you mean "status"?)`},
	} {
		if _, err := parseWhere(tc.in); err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
		}
	}
	w, err := parseWhere(`customer = "ann" and status = failed`)
	if err != nil || w.q.Status != "failed" || len(w.q.Search) != 1 || w.q.Search[0].Value != "ann" {
		t.Fatalf("parsed %+v %v", w.q, err)
	}
}
