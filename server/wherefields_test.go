package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// The messages a filter gets, as a user reads them: a typo of a built-in key, of a search
// field (with the runs' fields, and with none), an operator a field does not take, and ==.
// UPDATE=1 rewrites testdata/where_messages.golden.
func TestWhereMessagesGolden(t *testing.T) {
	known := []string{"amount", "customer", "paid_at"}
	var b strings.Builder
	for _, in := range []string{
		`custmer = "ann"`,
		`customer = ann and amont > 10`,
		`zebra = 1`,
		`stauts = failed`,
		`customer == "ann"`,
		`status == running`,
		`customer ~ ann`,
		`customer = ann and`,
	} {
		msg := "ok"
		q, err := ParseWhere(in)
		if err == nil {
			err = SearchFieldError(q.Search, known)
		}
		if err != nil {
			msg = err.Error()
		}
		fmt.Fprintf(&b, "%s\n\t%s\n", in, msg)
		if q, err := ParseWhere(in); err == nil {
			if err := SearchFieldError(q.Search, nil); err != nil {
				fmt.Fprintf(&b, "\twith no search fields: %s\n", err)
			}
		}
	}
	golden := filepath.Join("testdata", "where_messages.golden")
	if os.Getenv("UPDATE") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (UPDATE=1 go test ./server -run WhereMessagesGolden writes it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("messages differ from %s (UPDATE=1 rewrites it)\ngot:\n%s\nwant:\n%s", golden, b.String(), want)
	}
}

// A listing refuses a clause on a search field no run has, with the fields the runs have
// (a field whose value failed counts: it is declared), but answers "none" for a field some
// run has; a store without search values names none.
func TestListRefusesASearchFieldNoRunHas(t *testing.T) {
	empty := New(nil, history.NewMemStore())
	st := history.NewMemStore()
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	a := storetest.Started("wa", "ra", at)
	a.Run.Search = map[string]any{"customer": "ann"}
	b := storetest.Started("wb", "rb", at.Add(time.Second))
	b.Run.SearchProblems = map[string]string{"amount": "state.total is not a number"}
	if err := st.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{a, b}}); err != nil {
		t.Fatal(err)
	}
	s := New(nil, st)
	for _, tc := range []struct {
		srv   *Server
		where string
		runs  int
		err   string // "": none
	}{
		{s, `customer = ann`, 1, ""},
		{s, `customer = zed`, 0, ""},
		{s, `amount > 1`, 0, ""},
		{s, `custmer = ann`, 0, `list runs: where: unknown search field "custmer" (did you mean "customer"?); the runs' search fields are amount, customer`},
		{s, `customer = ann and vip = true`, 0, `unknown search field "vip"; the runs' search fields are amount, customer`},
		{empty, `customer = ann`, 0, `unknown search field "customer": no run has search fields`},
	} {
		q, err := ParseWhere(tc.where)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := tc.srv.List(q.StoreFilter())
		if tc.err == "" {
			if err != nil || len(runs) != tc.runs {
				t.Errorf("%s: %d runs, %v; want %d runs", tc.where, len(runs), err, tc.runs)
			}
			continue
		}
		var se *api.Error
		if !errors.As(err, &se) || se.Code != api.CodeBadRequest || !strings.Contains(se.Message, tc.err) {
			t.Errorf("%s: %v, want a bad request saying %q", tc.where, err, tc.err)
		}
		page, err := tc.srv.ListPage(q)
		if !errors.As(err, &se) || se.Code != api.CodeBadRequest {
			t.Errorf("%s: ListPage %+v, %v; want the same refusal", tc.where, page, err)
		}
	}
}
