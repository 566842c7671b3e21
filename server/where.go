package server

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// MaxWhere bounds a filter's text (--where, where=): it is typed by people.
const MaxWhere = 4096

// whereKeys are the filters every run has; any other key names a search field.
var whereKeys = []string{"status", "workflow", "name", "id", "started"}

var whereOps = map[string][]string{
	"status": {"="}, "workflow": {"="}, "name": {"="}, "id": {"^=", "~"}, "started": {">=", "<"},
}

var searchFieldName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ParseWhere reads a filter (wend list --where, GET /v1/runs?where=): clauses KEY OP VALUE
// joined by and,
//
//	status = failed and customer = "ann" and amount >= 100 and started >= 2026-01-01
//
// Keys: status, workflow (the workflow id), name (the spec's name:), id (^=: workflow id or
// run id starts with; ~: contains, in any case), started (>= and <), and any search field the
// workflows declare (=, !=, <, <=, >, >=: history.SearchCond). Values are bare words or
// "double-quoted" strings. Errors name the clause and what to write.
func ParseWhere(s string) (api.ListQuery, error) {
	var q api.ListQuery
	if len(s) > MaxWhere {
		return q, fmt.Errorf("%d bytes long, more than %d", len(s), MaxWhere)
	}
	toks, err := whereTokens(s)
	if err != nil {
		return q, err
	}
	if len(toks) == 0 {
		return q, fmt.Errorf("empty filter; e.g. status = running and name = order")
	}
	seen := map[string]bool{}
	for i := 0; i < len(toks); i += 4 {
		if len(toks)-i < 3 {
			return q, fmt.Errorf("%q is not a clause KEY OP VALUE, e.g. status = running", strings.Join(toks[i:], " "))
		}
		key, op, val := toks[i], toks[i+1], toks[i+2]
		if i+3 < len(toks) && !strings.EqualFold(toks[i+3], "and") {
			return q, fmt.Errorf("want 'and' after %s %s %s, got %q", key, op, val, toks[i+3])
		}
		if i+3 == len(toks)-1 {
			return q, fmt.Errorf("a clause must follow the last 'and'")
		}
		if op == "==" {
			return q, fmt.Errorf("%s == %s: write = (one equals sign): %s = %s", key, api.QuoteWhere(val), key, api.QuoteWhere(val))
		}
		if err := addClause(&q, key, op, val, seen); err != nil {
			return q, err
		}
	}
	if !q.StartedAfter.IsZero() && !q.StartedBefore.IsZero() && !q.StartedAfter.Before(q.StartedBefore) {
		return q, fmt.Errorf("started >= must be earlier than started <")
	}
	return q, nil
}

func addClause(q *api.ListQuery, key, op, val string, seen map[string]bool) error {
	ops, builtin := whereOps[key]
	if !builtin {
		return addSearch(q, key, op, val, seen)
	}
	if !slices.Contains(ops, op) {
		return fmt.Errorf("%s takes %s, not %q", key, strings.Join(ops, " or "), op)
	}
	if seen[key+op] {
		return fmt.Errorf("%s %s given twice", key, op)
	}
	seen[key+op] = true
	var err error
	switch key + op {
	case "status=":
		if err = CheckStatus(val); err != nil {
			return fmt.Errorf("status: %w", err)
		}
		q.Status = val
	case "workflow=":
		q.WorkflowID = val
	case "name=":
		q.Name = val
	case "id^=":
		q.IDPrefix = val
	case "id~":
		if len(val) > api.MaxListQuery {
			return fmt.Errorf("id ~: %d bytes long, more than %d", len(val), api.MaxListQuery)
		}
		q.Q = val
	case "started>=":
		q.StartedAfter, err = whereTime("started >=", val)
	case "started<":
		q.StartedBefore, err = whereTime("started <", val)
	}
	return err
}

// addSearch adds a clause on a search field. A key that is a likely typo of a built-in one is
// refused (spec refuses search fields so named, so none is lost by this).
func addSearch(q *api.ListQuery, key, op, val string, seen map[string]bool) error {
	if s := spec.Closest(key, whereKeys); s != "" || !searchFieldName.MatchString(key) {
		if s != "" {
			return fmt.Errorf("unknown key %q (did you mean %q?)", key, s)
		}
		return fmt.Errorf("unknown key %q; keys: status, workflow, name, id, started, or a search field of the workflows (lower-case letters, digits and _)", key)
	}
	if !slices.Contains(history.SearchOps, op) {
		return fmt.Errorf("search field %s takes %s, not %q", key, strings.Join(history.SearchOps, ", "), op)
	}
	if seen[key+op] {
		return fmt.Errorf("%s %s given twice", key, op)
	}
	seen[key+op] = true
	q.Search = append(q.Search, history.SearchCond{Field: key, Op: op, Value: val})
	return nil
}

// whereTime reads a time value: an RFC 3339 time with a zone, or a date (its first instant in UTC).
func whereTime(name, s string) (time.Time, error) {
	if t, ok := history.ParseSearchTime(s); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s: %q is not a date like 2024-05-01 or an RFC 3339 time like 2024-05-01T12:00:00Z", name, s)
}

// whereTokens splits a filter into words, operators and quoted strings.
func whereTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '"':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unclosed quote at byte %d", i+1)
			}
			toks = append(toks, b.String())
			i = j + 1
		case len(s) > i+1 && s[i+1] == '=' && strings.IndexByte("<>^!=", c) >= 0: // == too, to name it
			toks, i = append(toks, s[i:i+2]), i+2
		case c == '=' || c == '<' || c == '>' || c == '~':
			toks, i = append(toks, s[i:i+1]), i+1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\"=<>~^!", rune(s[j])) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q at byte %d", s[i], i+1)
			}
			toks, i = append(toks, s[i:j]), j
		}
	}
	return toks, nil
}
