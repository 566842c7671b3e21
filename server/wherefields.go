package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// A clause on a search field no run has is a typo far more often than a question: it is
// refused with the fields the runs do have, not answered with "no runs". The check costs
// nothing when a listing finds runs (a run without a field matches no clause on it, so every
// field of a filter that found one exists); only an empty answer asks which fields exist.

// SearchFieldLister is a Store that names, cheaply (from an index), the search fields its
// runs have values for. A field it does not name may still be on a run (a value that failed,
// an index being rebuilt): checkSearchFields then reads the runs.
type SearchFieldLister interface {
	SearchFields() ([]string, error)
}

// checkSearchFields refuses a clause of conds on a field no run of the store has.
func (s *Server) checkSearchFields(conds []history.SearchCond) error {
	if len(conds) == 0 || s.cluster != nil {
		return nil
	}
	if l, ok := s.store.(SearchFieldLister); ok {
		if fields, err := l.SearchFields(); err == nil && searchFieldsKnown(conds, fields) {
			return nil
		}
	}
	runs, err := s.store.Runs(history.RunFilter{})
	if err != nil {
		return wrap(fmt.Errorf("list runs: %w", err))
	}
	if err := SearchFieldError(conds, RunSearchFields(runs)); err != nil {
		return badList("where: " + err.Error())
	}
	return nil
}

func searchFieldsKnown(conds []history.SearchCond, fields []string) bool {
	for _, c := range conds {
		if !slices.Contains(fields, c.Field) {
			return false
		}
	}
	return true
}

// RunSearchFields are the search fields runs have, with a value or a problem, sorted.
func RunSearchFields(runs []history.Run) []string {
	seen := map[string]bool{}
	for _, r := range runs {
		for f := range r.Search {
			seen[f] = true
		}
		for f := range r.SearchProblems {
			seen[f] = true
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// SearchFieldError names the first clause of conds on a field not among known (the runs'
// search fields), with a near miss if there is one; nil when every field is known.
func SearchFieldError(conds []history.SearchCond, known []string) error {
	for _, c := range conds {
		if slices.Contains(known, c.Field) {
			continue
		}
		msg := fmt.Sprintf("unknown search field %q", c.Field)
		if s := spec.Closest(c.Field, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		if len(known) == 0 {
			return fmt.Errorf("%s: no run has search fields (a workflow declares them under search:); the other keys are %s",
				msg, strings.Join(whereKeys, ", "))
		}
		return fmt.Errorf("%s; the runs' search fields are %s, the other keys %s",
			msg, strings.Join(known, ", "), strings.Join(whereKeys, ", "))
	}
	return nil
}
