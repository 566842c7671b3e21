package driver

import (
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
)

// TestTriesRecordThePluginBuild: a try on Temporal records the plugin build that served it on
// its outcome (plugin_sha256), as the local engine does; the worker names it through
// wire.ActivityCallBuild. Before, every outcome recorded on Temporal had it empty.
func TestTriesRecordThePluginBuild(t *testing.T) {
	src := sim.Head + `steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: b, activity: p.echo, with: 2}
`
	e, _ := newEnv(t)
	evs := run(t, e, startInput(src, map[string]any{}, nil))
	n := 0
	for _, ev := range evs {
		if ev.Type != history.ActivityCompleted {
			continue
		}
		n++
		res, err := history.DataOf[history.ActivityResult](ev)
		if err != nil {
			t.Fatal(err)
		}
		if res.PluginSHA256 != fakeBuild {
			t.Errorf("%s %s: plugin_sha256 %q, want %q", ev.Type, ev.Step, res.PluginSHA256, fakeBuild)
		}
	}
	if n != 2 {
		t.Fatalf("%d ActivityCompleted, want 2", n)
	}
}
