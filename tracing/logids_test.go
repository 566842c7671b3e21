package tracing

import "testing"

func TestLogIDs(t *testing.T) {
	for _, tc := range []struct {
		name, in    string
		trace, span string
		ok          bool
	}{
		{"a try's", accepted, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true},
		{"empty", "", "", "", false},
		{"malformed", "00-xyz", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace, span, ok := LogIDs(tc.in)
			if trace != tc.trace || span != tc.span || ok != tc.ok {
				t.Errorf("LogIDs(%q) = %q %q %v, want %q %q %v", tc.in, trace, span, ok, tc.trace, tc.span, tc.ok)
			}
		})
	}
}
