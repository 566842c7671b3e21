package spec

import (
	"strings"
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

// TestRetentionOnTemporal: a retention is wend serve's; validating for Temporal says so at its line.
func TestRetentionOnTemporal(t *testing.T) {
	w, ds := Load("keep.wend.yaml", []byte("wend: v1\nname: keep\nretention: 7d\nsteps:\n  - delay: 1s\n"))
	if len(ds) > 0 {
		t.Fatal(ds.Error())
	}
	var found []Diagnostic
	for _, d := range CheckTarget(w, TargetTemporal) {
		if d.Path == "retention" {
			found = append(found, d)
		}
	}
	if len(found) != 1 || found[0].Line != 3 || found[0].Severity != SeverityInfo || !strings.Contains(found[0].Message, "namespace's retention") {
		t.Errorf("findings %+v", found)
	}
}
