package spec

import "testing"

func TestNameListStaysOnOneLine(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"a", "b_2"}, "a, b_2"},
		{[]string{"0\n00", "ok"}, `"0\n00", ok`},
		{[]string{"tab\there", "ls\u2028x"}, `"tab\there", "ls\u2028x"`},
	} {
		if got := nameList(tc.in); got != tc.want {
			t.Errorf("nameList(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
