package spec

import (
	"testing"
	"time"
)

// TestRetention: retention: is a duration with days; unset it is zero (serve's default applies).
func TestRetention(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       time.Duration
	}{
		{"days", "retention: 30d\n", 30 * 24 * time.Hour},
		{"hours", "retention: 36h\n", 36 * time.Hour},
		{"unset", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "wend: v1\nname: keep\n" + c.line + "steps:\n  - delay: 1s\n"
			w, diags := Load("keep.wend.yaml", []byte(src))
			if len(diags) > 0 {
				t.Fatalf("diagnostics: %v", diags)
			}
			if w.Retention.D != c.want || w.Retention.IsSet() != (c.want != 0) {
				t.Errorf("retention %v, want %v", w.Retention.D, c.want)
			}
		})
	}
}
