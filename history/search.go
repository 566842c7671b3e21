package history

import (
	"cmp"
	"strconv"
	"strings"
	"time"
)

// SearchOps are the operators a clause on a search field takes.
var SearchOps = []string{"=", "!=", "<", "<=", ">", ">="}

// SearchCond is a clause on a run's search field: Field Op Value, Value as the user wrote it.
// How it compares follows the type of the run's value: a number compares as a number, a bool
// as true or false, a time (RFC 3339 text) as a time, other text as text (= and != only).
// A run without a value for Field matches no clause on it.
type SearchCond struct {
	Field string `json:"field"`
	Op    string `json:"op"`
	Value string `json:"value"`
}

// Match reports whether r's search value passes c.
func (c SearchCond) Match(r Run) bool {
	v, ok := r.Search[c.Field]
	if !ok || v == nil {
		return false
	}
	var order int
	switch x := v.(type) {
	case float64:
		want, err := strconv.ParseFloat(c.Value, 64)
		if err != nil {
			return false
		}
		order = cmp.Compare(x, want)
	case bool:
		want, err := strconv.ParseBool(c.Value)
		if err != nil || (c.Op != "=" && c.Op != "!=") {
			return false
		}
		if x == want {
			order = 0
		} else {
			order = 1
		}
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			want, ok := ParseSearchTime(c.Value)
			if !ok {
				return false
			}
			order = t.Compare(want)
		} else {
			if c.Op != "=" && c.Op != "!=" {
				return false
			}
			order = strings.Compare(x, c.Value)
		}
	default:
		return false
	}
	return opHolds(c.Op, order)
}

// ParseSearchTime reads a time a clause compares with: RFC 3339, or a date (midnight UTC).
func ParseSearchTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

func opHolds(op string, order int) bool {
	switch op {
	case "=":
		return order == 0
	case "!=":
		return order != 0
	case "<":
		return order < 0
	case "<=":
		return order <= 0
	case ">":
		return order > 0
	case ">=":
		return order >= 0
	}
	return false
}
