package testsuite

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Every history the driver records for the example cases is one production accepts: a
// fresh interpreter replays it to the same decisions, history.Check finds nothing wrong, and
// playing the case again records the same events (backoff jitter included).
func TestPlayedHistoriesReplay(t *testing.T) {
	files, err := Find([]string{"../examples"})
	if err != nil {
		t.Fatal(err)
	}
	loader := &spec.Loader{}
	played := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, ds := Decode(path, data)
		if f == nil {
			t.Fatalf("%s: %v", path, ds)
		}
		w, wds, err := loader.LoadFile(f.Workflow)
		if err != nil || wds.HasErrors() {
			t.Fatalf("%s: %v %v", f.Workflow, err, wds)
		}
		for _, c := range f.Cases {
			o := Play(f, c, w, loader)
			st, _ := history.DataOf[history.Started](o.Events[0])
			if err := interpreter.New(w, st).Replay(o.Events); err != nil {
				t.Errorf("%s %q: replay: %v", path, c.Name, err)
			}
			last := o.Events[len(o.Events)-1]
			rec := history.Run{WorkflowID: st.WorkflowID, RunID: st.RunID, Status: history.StatusRunning, LastSeq: last.Seq}
			if last.Type.Terminal() {
				rec.Status, rec.ClosedReason = history.ClosedBy(last)
			}
			if ps := history.Check(rec, o.Events); len(ps) > 0 {
				t.Errorf("%s %q: history check: %v", path, c.Name, ps)
			}
			again := Play(f, c, w, loader)
			a, _ := json.Marshal(o.Events)
			b, _ := json.Marshal(again.Events)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s %q: a second play recorded other events", path, c.Name)
			}
			played++
		}
	}
	if played < 40 {
		t.Fatalf("played %d cases, want the examples' 40 or more", played)
	}
}
