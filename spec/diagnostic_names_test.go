package spec

import "testing"

// TestFindingsNameSteps: a finding under a step with an id is named from the innermost such
// step (charge.retry, wrap.steps[0].timeout); a step without one, an id two steps share and a
// finding about the id itself keep the positional path.
func TestFindingsNameSteps(t *testing.T) {
	head := "wend: v1\nname: t\nplugins: {p: ./p}\nsteps:\n"
	tests := []struct{ name, steps, path, want string }{
		{"by id", "  - id: charge\n    activity: p.x\n    retry: no\n", "steps[0].retry", "charge.retry"},
		{"nested, no inner id", "  - id: wrap\n    steps:\n      - activity: p.x\n        timeout: soon\n", "steps[0].steps[0].timeout", "wrap.steps[0].timeout"},
		{"inner id wins", "  - id: wrap\n    steps:\n      - id: inner\n        activity: p.x\n        timeout: soon\n", "steps[0].steps[0].timeout", "inner.timeout"},
		{"no id", "  - activity: p.x\n    retry: no\n", "steps[0].retry", ""},
		{"shared id", "  - id: twice\n    activity: p.x\n  - id: twice\n    activity: p.x\n    retry: no\n", "steps[1].retry", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ds := Load("t.wend.yaml", []byte(head+tt.steps))
			found := false
			for _, d := range ds {
				if d.Path != tt.path {
					continue
				}
				found = true
				if d.Name != tt.want {
					t.Errorf("%s: name %q, want %q (%s)", d.Path, d.Name, tt.want, d)
				}
			}
			if !found {
				t.Fatalf("no finding at %s: %v", tt.path, ds)
			}
		})
	}
}
