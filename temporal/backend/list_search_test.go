package backend

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
)

var wendAttrs = map[string]enumspb.IndexedValueType{
	"wend_customer": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"wend_amount":   enumspb.INDEXED_VALUE_TYPE_DOUBLE,
	"wend_vip":      enumspb.INDEXED_VALUE_TYPE_BOOL,
	"wend_paid_at":  enumspb.INDEXED_VALUE_TYPE_DATETIME,
	"wend_note":     enumspb.INDEXED_VALUE_TYPE_TEXT,
	"CustomerId":    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}

// TestSearchClauses: each search clause becomes a clause on the field's attribute, its value
// written as the attribute's type reads it, a string quoted so no value ends the literal.
func TestSearchClauses(t *testing.T) {
	types := map[string]string{}
	for name, typ := range wendAttrs {
		types[name] = searchTypeNames[typ]
	}
	cases := []struct {
		where, want, err string
	}{
		{`customer = "ann"`, ` AND wend_customer = 'ann'`, ""},
		{`customer != "it's"`, ` AND wend_customer != 'it''s'`, ""},
		{`customer = "say \"hi\""`, ``, ""},
		{`customer = "a\\b" and amount = 1`, ` AND wend_amount = 1`, ""},
		{`customer = "' OR WorkflowType != '"`, ` AND wend_customer = ''' OR WorkflowType != '''`, ""},
		{`amount >= 12.5 and vip = true`, ` AND wend_amount >= 12.5 AND wend_vip = true`, ""},
		{`paid_at < 2026-05-02`, ` AND wend_paid_at < '2026-05-02T00:00:00Z'`, ""},
		{`paid_at >= "2026-05-01T10:00:00+02:00"`, ` AND wend_paid_at >= '2026-05-01T08:00:00Z'`, ""},
		{`tier = gold`, "", "search field tier: the namespace has no search attribute wend_tier"},
		{`customer > "ann"`, "", "search field customer: a string field takes = or !=, not >"},
		{`amount = lots`, "", `search field amount: a number field compares with a number, not "lots"`},
		{`vip > true`, "", "search field vip: a bool field takes"},
		{`paid_at = tuesday`, "", "search field paid_at: a time field compares with"},
		{`note = "x"`, "", "search field note: the search attribute wend_note is a Text"},
	}
	for _, c := range cases {
		t.Run(c.where, func(t *testing.T) {
			q, err := server.ParseWhere(c.where)
			if err != nil {
				t.Fatal(err)
			}
			got, err := searchClauses(q.Search, types)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("error %v, want one starting %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("clauses %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func payload(t *testing.T, v any, typ string) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	p.Metadata["type"] = []byte(typ)
	return p
}

// TestListBySearchField: a filter with search clauses is a visibility query on the wend
// attributes, and the runs the cluster returns carry their search values, checked again here
// as the local filter checks them.
func TestListBySearchField(t *testing.T) {
	b, f := newFake()
	f.op.attrs = wendAttrs
	ann := info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)
	ann.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
		"wend_customer": payload(t, "ann", "Keyword"), "wend_amount": payload(t, 12.5, "Double"),
		"wend_paid_at": payload(t, "2026-05-01T10:00:00+02:00", "Datetime"), "CustomerId": payload(t, "c1", "Keyword")}}
	bob := info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)
	bob.Execution = &commonpb.WorkflowExecution{WorkflowId: "order-2", RunId: "run-2"}
	bob.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
		"wend_customer": payload(t, "bob", "Keyword")}}
	f.listed = []*workflowpb.WorkflowExecutionInfo{ann, bob}

	q, err := server.ParseWhere(`customer = "ann" and status = running`)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := b.List(q, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "list WorkflowType = 'wend.v1' AND ExecutionStatus = 'Running' AND wend_customer = 'ann'"; len(f.calls) != 1 || f.calls[0] != want {
		t.Fatalf("calls %q, want [%q]", f.calls, want)
	}
	if len(runs) != 1 || runs[0].RunID != "run-1" {
		t.Fatalf("runs %+v, want run-1 only", runs)
	}
	want := map[string]any{"customer": "ann", "amount": 12.5, "paid_at": "2026-05-01T08:00:00Z"}
	if !reflect.DeepEqual(runs[0].Search, want) {
		t.Fatalf("search values %v, want %v", runs[0].Search, want)
	}

	// A value the query cannot quote is matched by the local check alone.
	f.calls = nil
	bob.SearchAttributes.IndexedFields["wend_customer"] = payload(t, `say "hi"`, "Keyword")
	q, _ = server.ParseWhere(`customer = "say \"hi\""`)
	runs, err = b.List(q, 0)
	if err != nil || len(runs) != 1 || runs[0].RunID != "run-2" {
		t.Fatalf("runs %+v, %v; want run-2 only", runs, err)
	}
	if want := "list WorkflowType = 'wend.v1'"; len(f.calls) != 1 || f.calls[0] != want {
		t.Fatalf("calls %q, want [%q]", f.calls, want)
	}

	q, _ = server.ParseWhere(`tier = gold`)
	if _, err := b.List(q, 0); err == nil || !strings.Contains(err.Error(), "no search attribute wend_tier") {
		t.Fatalf("an unregistered field: %v", err)
	}
}

// TestStartNamesRegisteredAttributes: a start hands the driver the wend attributes the
// namespace has, and a namespace that cannot say gives none without failing the start.
func TestStartNamesRegisteredAttributes(t *testing.T) {
	src := "wend: v1\nname: order\nsearch:\n  customer: {type: string, value: \"${{ input.c }}\"}\nsteps: [{delay: 1s}]\n"
	b, f := newFake()
	f.op.attrs = wendAttrs
	if _, err := b.Start(context.Background(), engine.StartRequest{WorkflowID: "order-2", SpecFile: "/w/o.wend.yaml", Source: src, Input: json.RawMessage(`{"c":"ann"}`)}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"wend_customer": "Keyword", "wend_amount": "Double", "wend_vip": "Bool", "wend_paid_at": "Datetime", "wend_note": "Text"}
	if !reflect.DeepEqual(f.input.SearchAttributes, want) {
		t.Fatalf("start input search attributes %v, want %v", f.input.SearchAttributes, want)
	}

	b, f = newFake()
	f.op.err = errors.New("permission denied")
	if _, err := b.Start(context.Background(), engine.StartRequest{WorkflowID: "order-3", SpecFile: "/w/o.wend.yaml", Source: src, Input: json.RawMessage(`{"c":"ann"}`)}); err != nil {
		t.Fatalf("start when the attributes cannot be listed: %v", err)
	}
	if f.input.SearchAttributes != nil {
		t.Fatalf("search attributes %v, want none", f.input.SearchAttributes)
	}
}
