package backend

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/converter"
)

// searchTypes are the types of the namespace's wend search attributes, name to type as
// spec.TemporalSearchType names them; it is asked only when a filter has search clauses.
func (b *Backend) searchTypes(ctx context.Context) (map[string]string, error) {
	resp, err := b.c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: b.ns})
	if err != nil {
		return nil, clusterError("", err)
	}
	out := map[string]string{}
	for name, typ := range resp.GetCustomAttributes() {
		if strings.HasPrefix(name, spec.TemporalSearchPrefix) {
			out[name] = searchTypeNames[typ]
		}
	}
	return out, nil
}

// searchClauses are the visibility query clauses for search conditions: each on the field's
// attribute (spec.TemporalSearchAttribute), its value written as the attribute's type reads
// it; a string the query cannot quote (searchQuotable) is left out, for the local check
// after the listing. A field whose attribute is not registered, or a value or operator its
// type cannot compare, is an error naming the clause.
func searchClauses(conds []history.SearchCond, types map[string]string) (string, error) {
	var s strings.Builder
	for _, c := range conds {
		attr := spec.TemporalSearchAttribute(c.Field)
		lit, err := searchLiteral(c, types[attr])
		if err != nil {
			return "", fmt.Errorf("search field %s: %w", c.Field, err)
		}
		if lit == "" {
			continue // the local check after the listing filters by it
		}
		fmt.Fprintf(&s, " AND %s %s %s", attr, c.Op, lit)
	}
	return s.String(), nil
}

// searchLiteral is c's value as a literal of a search attribute of type typ.
func searchLiteral(c history.SearchCond, typ string) (string, error) {
	equality := c.Op == "=" || c.Op == "!="
	switch typ {
	case "":
		return "", fmt.Errorf("the namespace has no search attribute %s: runs keep the field on Temporal once it is registered (wend validate --target temporal prints the command)", spec.TemporalSearchAttribute(c.Field))
	case "Keyword":
		if !equality {
			return "", fmt.Errorf("a string field takes = or !=, not %s", c.Op)
		}
		if !searchQuotable(c.Value) {
			// The embedded server's SQL visibility matched no value holding a double quote
			// and read backslashes inconsistently: such a clause is left to the local check.
			return "", nil
		}
		return quoteLiteral(c.Value), nil
	case "Double":
		n, err := strconv.ParseFloat(c.Value, 64)
		if err != nil {
			return "", fmt.Errorf("a number field compares with a number, not %q", c.Value)
		}
		return strconv.FormatFloat(n, 'g', -1, 64), nil
	case "Bool":
		v, err := strconv.ParseBool(c.Value)
		if err != nil || !equality {
			return "", fmt.Errorf("a bool field takes = true, = false (or !=), not %s %q", c.Op, c.Value)
		}
		return strconv.FormatBool(v), nil
	case "Datetime":
		t, ok := history.ParseSearchTime(c.Value)
		if !ok {
			return "", fmt.Errorf("a time field compares with an RFC 3339 time or a date, not %q", c.Value)
		}
		return quoteLiteral(t.UTC().Format(time.RFC3339Nano)), nil
	}
	return "", fmt.Errorf("the search attribute %s is a %s, where wend keeps a %s, Double, Bool or Datetime",
		spec.TemporalSearchAttribute(c.Field), typ, "Keyword")
}

// quoteLiteral writes s, which holds no double quote or backslash, as a visibility query
// string literal: the query language is SQL's, where a quote inside a literal is doubled.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// searchQuotable reports whether a string value can be a literal of the visibility query.
func searchQuotable(s string) bool { return !strings.ContainsAny(s, `"\`) }

// searchOf reads a run's wend search attributes back as history.Run.Search holds its search
// values (a time as RFC 3339 text), so the filter matches them as it matches local runs.
func searchOf(sa *commonpb.SearchAttributes) map[string]any {
	var out map[string]any
	for name, p := range sa.GetIndexedFields() {
		field, ok := strings.CutPrefix(name, spec.TemporalSearchPrefix)
		if !ok {
			continue
		}
		var v any
		if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil || v == nil {
			continue
		}
		if s, ok := v.(string); ok && string(p.GetMetadata()["type"]) == "Datetime" {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				v = t.UTC().Format(time.RFC3339Nano)
			}
		}
		if out == nil {
			out = map[string]any{}
		}
		out[field] = v
	}
	return out
}
