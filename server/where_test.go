package server

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

func TestParseWhere(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want api.ListQuery
		err  string
	}{
		{in: "status = running", want: api.ListQuery{Status: "running"}},
		{in: `name = order AND workflow = "a b" and id ~ x`, want: api.ListQuery{Name: "order", WorkflowID: "a b", Q: "x"}},
		{in: "id ^= ord- and started >= 2025-12-01 and started < 2026-01-01",
			want: api.ListQuery{IDPrefix: "ord-", StartedAfter: day.AddDate(0, -1, 0), StartedBefore: day}},
		{in: `workflow = "q\"t"`, want: api.ListQuery{WorkflowID: `q"t`}},
		{in: `customer = "ann" and status = failed`, want: api.ListQuery{Status: "failed", Search: []history.SearchCond{{Field: "customer", Op: "=", Value: "ann"}}}},
		{in: "amount>=100 and amount<200 and vip != false and paid_at <= 2026-05-01T10:00:00+02:00 and n > -1.5",
			want: api.ListQuery{Search: []history.SearchCond{cond("amount", ">=", "100"), cond("amount", "<", "200"), cond("vip", "!=", "false"),
				cond("paid_at", "<=", "2026-05-01T10:00:00+02:00"), cond("n", ">", "-1.5")}}},
		{in: "", err: "empty filter"},
		{in: "status running", err: `"status running" is not a clause`},
		{in: "status = running or name = x", err: `want 'and' after status = running, got "or"`},
		{in: "stauts = running", err: `unknown key "stauts" (did you mean "status"?)`},
		{in: "Customer = ann", err: `unknown key "Customer"; keys: status, workflow, name, id, started, or a search field`},
		{in: "id = x", err: `id takes ^= or ~, not "="`},
		{in: "customer ~ ann", err: `search field customer takes =, !=, <, <=, >, >=, not "~"`},
		{in: "name = a and name = b", err: "name = given twice"},
		{in: "amount > 1 and amount > 2", err: "amount > given twice"},
		{in: "started >= 2026-01-01 and started < 2025-01-01", err: "must be earlier"},
		{in: `name = "open`, err: "unclosed quote at byte 8"},
		{in: "customer = ann!", err: `unexpected '!' at byte 15`},
		{in: "status = nope", err: "status: "},
		{in: "started < yesterday", err: `started <: "yesterday" is not a date`},
		{in: "name = a and", err: "a clause must follow the last 'and'"},
		{in: strings.Repeat("x", MaxWhere+1), err: "more than 4096"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			q, err := ParseWhere(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(q, tc.want) {
				t.Fatalf("%+v %v, want %+v", q, err, tc.want)
			}
		})
	}
}

// TestWhereTravelsAsParameters: a query from a filter, sent as GET /v1/runs's parameters
// (Values, what wend list sends to a serve), reads back the same, quotes and all.
func TestWhereTravelsAsParameters(t *testing.T) {
	for _, in := range []string{
		`id ^= "a \"b\" \\c" and customer = "ann lee" and amount >= 10 and status = failed`,
		`name = order and started >= 2026-01-01`,
	} {
		q, err := ParseWhere(in)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseListQuery(q.Values())
		if err != nil {
			t.Fatalf("%s: %v (values %s)", in, err, q.Values().Encode())
		}
		if !reflect.DeepEqual(back, q) {
			t.Fatalf("%s: read back %+v, want %+v", in, back, q)
		}
	}
}

func TestWhereParameterConflicts(t *testing.T) {
	for _, tc := range []struct{ params, err string }{
		{"status=failed&where=status+%3D+running", "status is given both in the where filter and on its own"},
		{"where=customer+%3D", "where: "},
		{"started_after=2026-02-01T00:00:00Z&where=started+%3C+2026-01-01", "started after must be earlier than started before"},
	} {
		v, _ := url.ParseQuery(tc.params)
		if _, err := ParseListQuery(v); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err %v, want %q", tc.params, err, tc.err)
		}
	}
}

func TestListQueryMatchesIDPrefixAndSearch(t *testing.T) {
	q, err := ParseWhere(`id ^= ab and customer = ann`)
	if err != nil {
		t.Fatal(err)
	}
	ann := map[string]any{"customer": "ann"}
	for _, tc := range []struct {
		r    history.Run
		want bool
	}{
		{history.Run{WorkflowID: "abc", RunID: "1", Search: ann}, true},
		{history.Run{WorkflowID: "x", RunID: "ab9", Search: ann}, true},
		{history.Run{WorkflowID: "xab", RunID: "2", Search: ann}, false},
		{history.Run{WorkflowID: "abc", RunID: "3", Search: map[string]any{"customer": "bob"}}, false},
		{history.Run{WorkflowID: "abc", RunID: "4"}, false},
	} {
		if got := q.Match(tc.r); got != tc.want {
			t.Errorf("%+v: match %v, want %v", tc.r, got, tc.want)
		}
	}
}

// FuzzParseWhere: any filter text parses or is refused with an error; never a panic, and what
// parses survives the trip through Values.
func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"status = running", `name = "a b" and id ^= x`, "started >= 2026-01-01 and started < 2026-02-01",
		`customer != "a\"b" and amount <= 3`, `"`, "^", "= = =", "a!=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseWhere(s)
		if err != nil {
			return
		}
		if _, err := ParseListQuery(q.Values()); err != nil && !strings.Contains(err.Error(), "bytes long") {
			t.Fatalf("%q parses but its parameters do not: %v", s, err)
		}
	})
}

func cond(field, op, value string) history.SearchCond {
	return history.SearchCond{Field: field, Op: op, Value: value}
}
