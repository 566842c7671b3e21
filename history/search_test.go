package history

import "testing"

func TestSearchCondMatch(t *testing.T) {
	r := Run{Search: map[string]any{"s": "ann", "n": 12.5, "b": true, "t": "2026-05-01T08:00:00Z", "nothing": nil}}
	for _, tc := range []struct {
		c    SearchCond
		want bool
	}{
		{SearchCond{"s", "=", "ann"}, true},
		{SearchCond{"s", "!=", "ann"}, false},
		{SearchCond{"s", "<", "bob"}, false}, // text takes = and != only
		{SearchCond{"n", "=", "12.5"}, true},
		{SearchCond{"n", ">", "12"}, true},
		{SearchCond{"n", "<=", "12"}, false},
		{SearchCond{"n", "=", "twelve"}, false},
		{SearchCond{"b", "=", "true"}, true},
		{SearchCond{"b", "!=", "false"}, true},
		{SearchCond{"b", "<", "true"}, false},
		{SearchCond{"t", ">=", "2026-05-01"}, true},
		{SearchCond{"t", "<", "2026-05-01T10:00:00+02:00"}, false}, // the same instant
		{SearchCond{"t", "=", "2026-05-01T10:00:00+02:00"}, true},
		{SearchCond{"t", "=", "yesterday"}, false},
		{SearchCond{"nothing", "!=", "x"}, false}, // no value matches no clause
		{SearchCond{"absent", "!=", "x"}, false},
		{SearchCond{"s", "~", "ann"}, false},
	} {
		if got := tc.c.Match(r); got != tc.want {
			t.Errorf("%s %s %s = %v, want %v", tc.c.Field, tc.c.Op, tc.c.Value, got, tc.want)
		}
	}
}
