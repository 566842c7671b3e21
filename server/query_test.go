package server

import (
	"net/url"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// TestQueryRoute: GET /v1/runs/{id}/query?expr= answers the expression's value over the
// run's input, state and step outputs, and each refusal names what is wrong with its code.
func TestQueryRoute(t *testing.T) {
	store := history.NewMemStore()
	f := newFixture(t, store)
	st := f.start("order-1", `{"who":"ann"}`)
	f.waitFor("order-1", waitingForSignal)
	before, _ := store.Events(st.Run.RunID, 0)
	q := func(expr string) string { return "/v1/runs/order-1/query?expr=" + url.QueryEscape(expr) }

	var res api.QueryResult
	if code, b := f.do("GET", q(`{"who": input.who, "hi": steps.greet.output.hi}`), "", &res); code != 200 ||
		string(res.Value) != `{"hi":"ann","who":"ann"}` || res.Run.RunID != st.Run.RunID {
		t.Fatalf("query: %d %s", code, b)
	}
	for _, c := range []struct {
		path   string
		status int
		code   string
		frag   string
	}{
		{"/v1/runs/order-1/query", 400, api.CodeBadQuery, "no expression given"},
		{q(strings.Repeat("x", 4097)), 400, api.CodeBadQuery, "the expression is 4097 bytes, over the 4096-byte limit"},
		{q("input.who +"), 400, api.CodeBadQuery, "query: invalid query: unexpected token"},
		{q("now()"), 400, api.CodeBadQuery, "now() reads the clock"},
		{q("steps.approve.output.by"), 422, api.CodeQueryFailed, `steps.approve: step "approve" has no output in run ` + st.Run.RunID},
		{"/v1/runs/nope/query?expr=1", 404, api.CodeNotFound, `no workflow or run "nope"`},
		{q("groupBy([1, 2, 3], # % 2)"), 422, api.CodeQueryFailed, "the value is not JSON"},
	} {
		code, b := f.do("GET", c.path, "", nil)
		wantError(t, code, b, c.status, c.code, c.frag)
	}
	if after, _ := store.Events(st.Run.RunID, 0); len(after) != len(before) {
		t.Fatalf("queries changed the history: %d events, then %d", len(before), len(after))
	}
}
