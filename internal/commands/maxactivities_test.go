package commands

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/wendflow/wend/interpreter/engine"
)

// The driver's engine makes at most --max-activities calls at once (the engine's tests cover
// what a try over it does).
func TestDriverMaxActivities(t *testing.T) {
	for _, tc := range []struct{ flag, want int }{{0, engine.DefaultMaxActivities}, {3, 3}} {
		e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		d, err := startDriverWith(e, filepath.Join(t.TempDir(), "wend.db"), driverOptions{maxActivities: tc.flag})
		if err != nil {
			t.Fatal(err)
		}
		got := d.Engine.CallStats().Max
		d.close()
		if got != tc.want {
			t.Errorf("maxActivities %d: engine makes %d calls at once, want %d", tc.flag, got, tc.want)
		}
	}
}
