package termtext

import "testing"

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, keep, want string }{
		{"order-7", "", "order-7"},
		{"été", "", "été"},
		{"\x1b[2Jgone", "", `\x1b[2Jgone`},
		{"a\nb\tc", "", `a\nb\tc`},
		{"a\nb\tc\x07", "\n\t", "a\nb\tc\\a"},
		{"a\u009b31m\x7f", "", `a\u009b31m\x7f`},
		{"a\xffb", "", `a\xffb`},
	} {
		if got := Escape(tc.in, tc.keep); got != tc.want {
			t.Errorf("Escape(%q, %q) = %q, want %q", tc.in, tc.keep, got, tc.want)
		}
	}
}

func TestOneLineEscapesNewlinesAndTabs(t *testing.T) {
	if got, want := OneLine("step failed:\n\tboom\x1b[31m"), `step failed:\n\tboom\x1b[31m`; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
}

func BenchmarkEscapePlain(b *testing.B) {
	for b.Loop() {
		_ = Escape("steps[17]: completed (attempt 1)", "")
	}
}
