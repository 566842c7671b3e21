package commands

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/app/apptest"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
)

// A plugin whose first start hangs past the start_timeout its declaration gives is started
// again, and the step's one try completes: a slow start does not use up the step's tries.
func TestSlowFirstStartDoesNotUseATry(t *testing.T) {
	bin := buildTestPlugin(t, "v1")
	dir := t.TempDir()
	deploy(t, bin, filepath.Join(dir, "plug"))
	src := "wend: v1\nname: slow\nplugins:\n  p: {command: [./plug], start_timeout: 1s, env: [WEND_TESTPLUGIN_HANG_FIRST=" +
		filepath.Join(dir, "started") + "]}\nsteps:\n  - {id: e, activity: p.echo, with: 1, retry: {tries: 1}}\n"
	file := filepath.Join(dir, "slow.wend.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	a := apptest.Open(t, apptest.Options{Dir: dir})
	st, eng := a.Store, a.Engine
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := eng.Start(ctx, engine.StartRequest{WorkflowID: "slow", SpecFile: file, Source: src}); err != nil {
		t.Fatal(err)
	}
	r, err := eng.WaitClosed(ctx, "slow")
	if err != nil || r.Status != history.StatusCompleted {
		evs, _ := st.Events(r.RunID, 0)
		for _, ev := range evs {
			t.Logf("%s %s %s", ev.Type, ev.Step, ev.Data)
		}
		t.Fatalf("run %+v, %v; want it completed on its one try", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err != nil {
		t.Fatalf("the first start did not happen: %v", err)
	}
}
