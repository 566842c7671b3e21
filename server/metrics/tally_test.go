package metrics

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/internal/servertest"
	"github.com/wendflow/wend/testkit/enginetest"
)

// mixSpec retries in a loop, fails in a parallel branch whose catch handles it, waits out a
// delay and fails for good: most of what a history records.
const mixSpec = `wend: v1
name: mix
plugins: {demo: ./demo}
steps:
  - id: each
    for_each: "${{ [1, 2, 3] }}"
    steps:
      - {activity: demo.recovers, retry: {tries: 5, backoff: [1ms]}}
  - id: par
    parallel:
      - {activity: demo.echo, with: 1}
      - {id: bad, activity: demo.fail, catch: [{activity: demo.echo, with: caught}]}
  - {delay: 1ms}
  - {id: last, activity: demo.fail}
`

// wantSameSummaries fails where a tally of each prefix of evs differs from summarize's fold
// of it, for the run open and closed as r says.
func wantSameSummaries(t *testing.T, name string, r history.Run, evs []history.Event) {
	t.Helper()
	var shapes shapeCache
	tl := newTally()
	for i, ev := range evs {
		if !tl.fold(ev, &shapes) {
			t.Errorf("%s: the tally cannot follow event %d (%s)", name, ev.Seq, ev.Type)
			return
		}
		runs := []history.Run{r}
		if tl.shape == nil || !tl.shape.signals { // an open run's signal waits are a replay's
			open := r
			open.Status, open.LastSeq = history.StatusRunning, ev.Seq
			runs = append(runs, open)
		}
		for _, run := range runs {
			want, err := summarize(run, evs[:i+1], nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := tl.summary(run); !bytes.Equal(pack(got), pack(want)) {
				t.Errorf("%s after event %d (%s), run %s:\n got %+v\nwant %+v", name, ev.Seq, ev.Type, run.Status, got, want)
			}
		}
	}
}

// A tally, folded an event at a time, says at every event what a fold of the whole history
// says, for histories the engine writes and the interpreter's recorded ones.
func TestATallyEqualsAWholeFold(t *testing.T) {
	store := history.NewMemStore()
	eng := enginetest.New(t, engine.Options{Store: store, Activities: servertest.Acts{}})
	srv := server.New(eng, store)
	dir := t.TempDir()
	for i, src := range []string{mixSpec, failSpec, servertest.EchoSpec} {
		wf := fmt.Sprint("wf", i)
		st, err := srv.Start(context.Background(), engine.StartRequest{WorkflowID: wf, SpecFile: filepath.Join(dir, wf+".wend.yaml"),
			Source: src, Input: json.RawMessage(`{"who":"bo"}`)})
		if err != nil {
			t.Fatal(err)
		}
		id := st.Run.RunID
		servertest.Settle(t, func() (api.RunDetail, error) { return srv.Show(id) }, closed)
		r, err := store.Run(id)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := store.Events(id, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d events, %s", r.Name, len(evs), r.Status)
		wantSameSummaries(t, r.Name, r, evs)
		// The same run moved to another text after its second event, and back to its own.
		for _, to := range []string{mixSpec, src} {
			moved := append([]history.Event{}, evs[:2]...)
			moved = append(moved, history.Event{Type: history.WorkflowMigrated, Time: evs[1].Time,
				Data: history.MustData(history.Migration{ToSHA256: fmt.Sprintf("%x", sha256.Sum256([]byte(to))), SpecSource: to})})
			moved = append(moved, evs[2:]...)
			for i := range moved {
				moved[i].Seq = uint64(i + 1)
			}
			wantSameSummaries(t, r.Name+" moved", r, moved)
		}
		// The same history with its times going back, event by event (a clock set back).
		back := append([]history.Event{}, evs...)
		for i := range back {
			back[i].Time = evs[0].Time.Add(-time.Duration(i) * time.Second)
		}
		wantSameSummaries(t, r.Name+" back in time", r, back)
	}
	for _, f := range []string{"map_order", "retries_catch_signal", "sequence_parallel_foreach"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "interpreter", "testdata", "histories", f+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Spec   string          `json:"spec"`
			Events []history.Event `json:"events"`
		}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatal(err)
		}
		st, err := history.DataOf[history.Started](h.Events[0])
		if err != nil {
			t.Fatal(err)
		}
		st.SpecFile, st.SpecSource = "t.wend.yaml", h.Spec
		h.Events[0].Data = history.MustData(st)
		last := h.Events[len(h.Events)-1]
		r := history.Run{RunID: st.RunID, Name: "t", Status: history.StatusRunning, LastSeq: last.Seq}
		if last.Type.Terminal() {
			r.Status, _ = history.ClosedBy(last)
		}
		wantSameSummaries(t, f, r, h.Events)
	}
}
