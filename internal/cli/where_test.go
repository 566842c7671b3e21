package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

func TestParseWhere(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in     string
		want   server.ListQuery
		prefix string
		err    string
	}{
		{in: "status = running", want: server.ListQuery{Status: "running"}},
		{in: `name = order AND workflow = "a b" and id ~ x`, want: server.ListQuery{Name: "order", WorkflowID: "a b", Q: "x"}},
		{in: "id ^= ord- and started >= 2025-12-01 and started < 2026-01-01", prefix: "ord-",
			want: server.ListQuery{StartedAfter: day.AddDate(0, -1, 0), StartedBefore: day}},
		{in: `workflow = "q\"t"`, want: server.ListQuery{WorkflowID: `q"t`}},
		{in: "", err: "--where: empty filter"},
		{in: "status running", err: `--where: "status running" is not a clause`},
		{in: "status = running or name = x", err: `--where: want 'and' after status = running, got "or"`},
		{in: "stauts = running", err: `unknown key "stauts" (did you mean "status"?)`},
		{in: "id = x", err: `--where: id takes ^= or ~, not "="`},
		{in: "name = a and name = b", err: "--where: name = given twice"},
		{in: "started >= 2026-01-01 and started < 2025-01-01", err: "must be earlier"},
		{in: `name = "open`, err: "--where: unclosed quote at byte 8"},
		{in: "status = nope", err: "--where: status: "},
		{in: "started < yesterday", err: `started <: "yesterday" is not a date`},
		{in: "name = a and", err: "a clause must follow the last 'and'"},
		{in: strings.Repeat("x", maxWhere+1), err: "more than 4096"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			w, err := parseWhere(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || w.q != tc.want || w.idPrefix != tc.prefix {
				t.Fatalf("%+v %q %v, want %+v %q", w.q, w.idPrefix, err, tc.want, tc.prefix)
			}
		})
	}
}

func TestWhereIDPrefix(t *testing.T) {
	w, err := parseWhere("id ^= ab")
	if err != nil {
		t.Fatal(err)
	}
	runs := []history.Run{{WorkflowID: "abc", RunID: "1"}, {WorkflowID: "x", RunID: "ab9"}, {WorkflowID: "xab", RunID: "2"}}
	if got := w.match(runs); len(got) != 2 || got[0].WorkflowID != "abc" || got[1].RunID != "ab9" {
		t.Fatalf("matched %+v", got)
	}
}

// FuzzParseWhere: any filter text parses or is refused with an error naming --where; never a
// panic.
func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"status = running", `name = "a b" and id ^= x`, "started >= 2026-01-01 and started < 2026-02-01", `"`, "^", "= = ="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := parseWhere(s); err != nil && !strings.HasPrefix(err.Error(), "--where: ") {
			t.Fatalf("error %q does not name --where", err)
		}
	})
}
