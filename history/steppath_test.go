package history

import "testing"

func TestStaticStepPath(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"steps[0]", "steps[0]"},
		{"steps[2]@1.steps[0]", "steps[2].steps[0]"},
		{"steps[1]@3.steps[0]@12.steps[4]", "steps[1].steps[0].steps[4]"},
		{"steps[0].catch", "steps[0].catch"},
		{"", ""},
	} {
		if got := StaticStepPath(tt.in); got != tt.want {
			t.Errorf("StaticStepPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
