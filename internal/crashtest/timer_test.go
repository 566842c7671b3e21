//go:build unix

package crashtest

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
)

// TestTimersAcrossCrashes is docs/reliability.md E3 on real processes: a workflow of short delays
// is killed again and again while it waits; every timer must fire exactly once, never before its
// time, and the run must finish.
func TestTimersAcrossCrashes(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, plugin := bins(t)
	dir := t.TempDir()
	db, log := filepath.Join(dir, "wend.db"), filepath.Join(dir, "inv.jsonl")
	const timers = 12
	var b strings.Builder
	fmt.Fprintf(&b, "wend: v1\nname: timers\nplugins: {demo: %q}\nsteps:\n", plugin)
	for i := range timers {
		fmt.Fprintf(&b, "  - {activity: demo.record, with: {path: %q, note: \"r%d\"}}\n  - delay: 300ms\n", log, i)
	}
	wf := filepath.Join(dir, "timers.wend.yaml")
	if err := os.WriteFile(wf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano() % 100000
	rng := rand.New(rand.NewSource(seed))
	kills := 0
	for i := 0; ; i++ {
		delay := time.Duration(100+rng.Intn(200)) * time.Millisecond
		if kills >= 15 {
			delay = 0
		}
		a := runOnceID(t, wend, db, wf, "timers", delay)
		if a.killed || a.exit == 137 {
			kills++
			continue
		}
		if a.exit != 0 {
			t.Fatalf("exit %d; stderr:\n%s", a.exit, a.stderr)
		}
		break
	}
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs(history.RunFilter{WorkflowID: "timers"})
	evs, err := st.Events(runs[0].RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	fireAt := map[string]time.Time{}
	fired := map[string]int{}
	early := 0
	for _, e := range evs {
		switch e.Type {
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](e)
			fireAt[ts.TimerID] = ts.FireAt
		case history.TimerFired:
			ref, _ := history.DataOf[history.TimerRef](e)
			fired[ref.TimerID]++
			if e.Time.Before(fireAt[ref.TimerID]) {
				early++
			}
		}
	}
	twice, never := 0, 0
	for id := range fireAt {
		switch n := fired[id]; {
		case n == 0:
			never++
		case n > 1:
			twice++
		}
	}
	fmt.Printf("RELIABILITY suite=timers kills=%d scheduled=%d fired_once=%d fired_twice=%d early=%d never=%d seed=%d\n",
		kills, len(fireAt), len(fireAt)-twice-never, twice, early, never, seed)
	if ps := history.Check(runs[0], evs); len(ps) > 0 || runs[0].Status != history.StatusCompleted {
		t.Fatalf("run %s, problems %v", runs[0].Status, ps)
	}
	if len(fireAt) != timers || twice+early+never > 0 {
		t.Fatalf("timers: scheduled %d, twice %d, early %d, never %d", len(fireAt), twice, early, never)
	}
	if kills < 8 {
		t.Fatalf("only %d kills", kills)
	}
}
