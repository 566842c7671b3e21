package app

import (
	"errors"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestRetentionOf: the registered file's retention wins, then the run's own spec text's (read
// once per sha256), then the default; the pass runs each minute, faster for a shorter
// retention, and hourly while none is known.
func TestRetentionOf(t *testing.T) {
	reads := 0
	r := retention{byName: map[string]time.Duration{"reg": time.Hour}, bySpec: map[string]time.Duration{}, def: 30 * 24 * time.Hour,
		read: func(runID string) (time.Duration, error) {
			reads++
			switch runID {
			case "own-1", "own-2":
				return 2 * time.Hour, nil
			case "broken":
				return 0, errors.New("unreadable")
			}
			return 0, nil
		}}
	for _, c := range []struct {
		run  history.Run
		want time.Duration
	}{
		{history.Run{RunID: "a", Name: "reg", SpecSHA256: "s1"}, time.Hour},
		{history.Run{RunID: "own-1", Name: "own", SpecSHA256: "s2"}, 2 * time.Hour},
		{history.Run{RunID: "own-2", Name: "own", SpecSHA256: "s2"}, 2 * time.Hour},
		{history.Run{RunID: "plain", Name: "plain", SpecSHA256: "s3"}, 30 * 24 * time.Hour},
		{history.Run{RunID: "broken", Name: "x", SpecSHA256: "s4"}, 30 * 24 * time.Hour},
		{history.Run{RunID: "nosha", Name: "x"}, 30 * 24 * time.Hour},
	} {
		if got := r.of(c.run); got != c.want {
			t.Errorf("run %s: %v, want %v", c.run.RunID, got, c.want)
		}
	}
	if reads != 3 { // s2 once, s3, s4; never for the registered name or a run without sha
		t.Errorf("%d spec reads, want 3", reads)
	}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	expired := r.expired(now)
	if !expired(history.Run{Name: "reg", ClosedAt: now.Add(-2 * time.Hour)}) || expired(history.Run{Name: "reg", ClosedAt: now.Add(-time.Minute)}) {
		t.Error("expired by the registered retention")
	}
	for _, c := range []struct {
		r    retention
		want time.Duration
	}{
		{r, time.Minute},
		{retention{byName: map[string]time.Duration{"s": 5 * time.Second}}, 5 * time.Second},
		{retention{def: time.Millisecond}, time.Second},
		{retention{bySpec: map[string]time.Duration{"s": 0}}, time.Hour},
		{retention{bySpec: map[string]time.Duration{"s": 10 * time.Second}}, 10 * time.Second},
	} {
		if got := c.r.every(); got != c.want {
			t.Errorf("every %v, want %v (%+v)", got, c.want, c.r)
		}
	}
}
