package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/spec"
)

// where is a parsed --where FILTER: `wend list`'s filters written as clauses joined by and,
//
//	status = running and name = order and id ^= ord- and started >= 2026-01-01
//
// Keys: status, workflow (the workflow id), name (the spec's name:), id (^=: workflow id or
// run id starts with; ~: contains, in any case), started (>= and <, as --started-after and
// --started-before). Values are bare words or "double-quoted" strings.
type where struct {
	q        server.ListQuery
	idPrefix string
}

// whereFlagsHelp is the --where, --dry-run and --yes part of the help of the commands that
// act on runs in bulk (cancel, terminate).
const whereFlagsHelp = `  --where F    act on every open run filter F matches, once each, newest first: clauses
               KEY OP VALUE joined by and, with wend list's filters: status = S,
               workflow = ID, name = NAME, id ^= PREFIX (workflow or run id starts with),
               id ~ TEXT (contains), started >= TIME, started < TIME; a VALUE with spaces
               in "double quotes". E.g. --where 'name = order and started < 2026-01-01'
  --dry-run    with --where: list the matching open runs (WORKFLOW_ID RUN_ID STATUS) and
               do nothing
  --yes        with --where: act (without it, say how many runs match and exit 2)

With --where, a line per run acted on goes to stdout, failures and progress (every 100 runs,
then a summary) to stderr.
`

// maxWhere bounds a filter's text: it is typed by people.
const maxWhere = 4096

var whereOps = map[string][]string{
	"status": {"="}, "workflow": {"="}, "name": {"="}, "id": {"^=", "~"}, "started": {">=", "<"},
}

// parseWhere reads a --where FILTER; errors name the clause and what to write.
func parseWhere(s string) (where, error) {
	var w where
	if len(s) > maxWhere {
		return w, fmt.Errorf("--where: %d bytes long, more than %d", len(s), maxWhere)
	}
	toks, err := whereTokens(s)
	if err != nil {
		return w, fmt.Errorf("--where: %w", err)
	}
	if len(toks) == 0 {
		return w, fmt.Errorf("--where: empty filter; e.g. --where 'status = running and name = order'")
	}
	seen := map[string]bool{}
	for i := 0; i < len(toks); i += 4 {
		if len(toks)-i < 3 {
			return w, fmt.Errorf("--where: %q is not a clause KEY OP VALUE, e.g. status = running", strings.Join(toks[i:], " "))
		}
		key, op, val := toks[i], toks[i+1], toks[i+2]
		if i+3 < len(toks) && !strings.EqualFold(toks[i+3], "and") {
			return w, fmt.Errorf("--where: want 'and' after %s %s %s, got %q", key, op, val, toks[i+3])
		}
		if i+3 == len(toks)-1 {
			return w, fmt.Errorf("--where: a clause must follow the last 'and'")
		}
		if err := w.add(key, op, val, seen); err != nil {
			return w, fmt.Errorf("--where: %w", err)
		}
	}
	if !w.q.StartedAfter.IsZero() && !w.q.StartedBefore.IsZero() && !w.q.StartedAfter.Before(w.q.StartedBefore) {
		return w, fmt.Errorf("--where: started >= must be earlier than started <")
	}
	return w, nil
}

func (w *where) add(key, op, val string, seen map[string]bool) error {
	ops, ok := whereOps[key]
	if !ok {
		msg := fmt.Sprintf("unknown key %q; keys: status, workflow, name, id, started", key)
		if s := spec.Closest(key, []string{"status", "workflow", "name", "id", "started"}); s != "" {
			msg = fmt.Sprintf("unknown key %q (did you mean %q?)", key, s)
		}
		return fmt.Errorf("%s", msg)
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
		if err = server.CheckStatus(val); err != nil {
			return fmt.Errorf("status: %w", err)
		}
		w.q.Status = val
	case "workflow=":
		w.q.WorkflowID = val
	case "name=":
		w.q.Name = val
	case "id^=":
		w.idPrefix = val
	case "id~":
		if len(val) > server.MaxListQuery {
			return fmt.Errorf("id ~: %d bytes long, more than %d", len(val), server.MaxListQuery)
		}
		w.q.Q = val
	case "started>=":
		w.q.StartedAfter, err = listTime("started >=", val)
	case "started<":
		w.q.StartedBefore, err = listTime("started <", val)
	}
	return err
}

// match keeps the runs the filter's client-side part (the id prefix) passes.
func (w where) match(runs []history.Run) []history.Run {
	if w.idPrefix == "" {
		return runs
	}
	out := runs[:0:0]
	for _, r := range runs {
		if strings.HasPrefix(r.WorkflowID, w.idPrefix) || strings.HasPrefix(r.RunID, w.idPrefix) {
			out = append(out, r)
		}
	}
	return out
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
		case strings.HasPrefix(s[i:], ">=") || strings.HasPrefix(s[i:], "^="):
			toks, i = append(toks, s[i:i+2]), i+2
		case c == '=' || c == '<' || c == '~':
			toks, i = append(toks, s[i:i+1]), i+1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\"=<>~^", rune(s[j])) {
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
