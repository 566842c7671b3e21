package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

var purgeT0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// startRun commits a new run of workflow name (workflow id wf), below parent when not "".
func startRun(t *testing.T, s *Store, name, wf, id, parent string, at time.Time) history.Run {
	t.Helper()
	u := storetest.Started(wf, id, at)
	u.Run.Name, u.Run.ParentRunID = name, parent
	if parent != "" {
		u.Run.ParentStep = "steps[0]"
		u.Events[0].Data = history.MustData(history.Started{WorkflowID: wf, RunID: id, Input: json.RawMessage(`{}`),
			ParentRunID: parent, ParentStep: "steps[0]"})
	}
	n := storetest.Next(u.Run, history.ActivityScheduled, 2)
	u.Run, u.Events = n.Run, append(u.Events, n.Events...)
	for i := range u.Events[1:] {
		u.Events[1+i].Time = at
	}
	// A timer task, as an open run holds.
	must(t, s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u},
		PutTasks: []history.Task{{ID: id + "/timer", RunID: id, Kind: history.TaskTimer, AvailableAt: at.Add(time.Hour)}}}))
	return u.Run
}

// closeRun completes r at at with status failed or completed; keepTask leaves its timer task
// behind, as a leftover the purge must take too.
func closeRun(t *testing.T, s *Store, r history.Run, status string, at time.Time, keepTask bool) history.Run {
	t.Helper()
	typ := history.WorkflowCompleted
	if status == history.StatusFailed {
		typ = history.WorkflowFailed
	}
	u := storetest.Next(r, typ, 1)
	u.Events[0].Time, u.Events[0].Step = at, ""
	u.Run.Status, u.Run.ClosedReason = history.ClosedBy(u.Events[0])
	u.Run.ClosedAt = at
	c := history.Commit{Runs: []history.RunUpdate{u}}
	if !keepTask {
		c.DeleteTasks = []string{r.RunID + "/timer"}
	}
	must(t, s.Commit(context.Background(), c))
	return u.Run
}

// dumpStore copies every key of every bucket out of the store, under "bucket/key" (and
// "events/run/seq"), with the run each belongs to ("" for heads, meta and schedules).
func dumpStore(t *testing.T, s *Store) (kv map[string][]byte, owner map[string]string) {
	t.Helper()
	kv, owner = map[string][]byte{}, map[string]string{}
	err := s.view("dump", func(tx *bolt.Tx) error {
		runOf := map[string]string{}
		err := tx.Bucket(bucketRunSlots).ForEach(func(k, v []byte) error {
			slot, err := readSlot(k, v)
			runOf[string(slot)] = string(k)
			return err
		})
		if err != nil {
			return err
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				key := fmt.Sprintf("%s/%x", name, k)
				run := ""
				switch string(name) {
				case "runs":
					run = string(k)
				case "events":
					return b.Bucket(k).ForEach(func(sk, sv []byte) error {
						key := fmt.Sprintf("events/%s/%x", k, sk)
						kv[key], owner[key] = bytes.Clone(sv), string(k)
						return nil
					})
				case "run_slots":
					run = string(k)
				case "run_events":
					run = runOf[string(k[:8])]
				case "workflows":
					_, run, _ = splitWorkflowKey(k)
				case "started":
					_, run, _ = splitStartedKey(k)
				case "tasks":
					tk, err := decodeTask(k, v)
					if err != nil {
						return err
					}
					run = tk.RunID
				}
				kv[key], owner[key] = bytes.Clone(v), run
				return nil
			})
		})
	})
	must(t, err)
	return kv, owner
}

func TestPurge(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	day := 24 * time.Hour
	// old, older: closed long ago; recent: closed lately; open: running; a parent still open
	// with a closed child; a closed parent with a closed child of another workflow; a failed run.
	old := closeRun(t, s, startRun(t, s, "nightly", "wf-old", "old", "", purgeT0), history.StatusCompleted, purgeT0.Add(time.Hour), true)
	older := closeRun(t, s, startRun(t, s, "nightly", "wf-older", "older", "", purgeT0), history.StatusCompleted, purgeT0.Add(time.Minute), false)
	recent := closeRun(t, s, startRun(t, s, "nightly", "wf-recent", "recent", "", purgeT0.Add(10*day)), history.StatusCompleted, purgeT0.Add(10*day), false)
	open := startRun(t, s, "nightly", "wf-open", "open", "", purgeT0)
	openParent := startRun(t, s, "batch", "wf-p1", "p1", "", purgeT0)
	lone := closeRun(t, s, startRun(t, s, "child", "wf-p1/c", "c1", openParent.RunID, purgeT0), history.StatusCompleted, purgeT0.Add(time.Hour), false)
	parent := startRun(t, s, "batch", "wf-p2", "p2", "", purgeT0)
	child := closeRun(t, s, startRun(t, s, "child", "wf-p2/c", "c2", parent.RunID, purgeT0), history.StatusCompleted, purgeT0.Add(time.Hour), false)
	parent = closeRun(t, s, parent, history.StatusCompleted, purgeT0.Add(2*time.Hour), false)
	failed := closeRun(t, s, startRun(t, s, "nightly", "wf-old", "failed", "", purgeT0), history.StatusFailed, purgeT0.Add(time.Hour), false)
	_ = recent
	must(t, s.PutScheduleStates(map[string][]byte{"every-minute": []byte(`{"state":{}}`)}, nil))

	cases := []struct {
		name   string
		filter history.PurgeFilter
		want   []string // purged, in order
	}{
		{"closed before, status", history.PurgeFilter{ClosedBefore: purgeT0.Add(day), Status: history.StatusCompleted, Workflow: "nightly"}, []string{older.RunID, old.RunID}},
		{"workflow takes its closed children, not a child of an open parent", history.PurgeFilter{Workflow: "batch"}, []string{parent.RunID, child.RunID}},
		{"a child goes only with its parent", history.PurgeFilter{Workflow: "child"}, nil},
		{"failed", history.PurgeFilter{Status: history.StatusFailed}, []string{failed.RunID}},
		{"everything closed", history.PurgeFilter{}, []string{older.RunID, failed.RunID, old.RunID, parent.RunID, child.RunID, recent.RunID}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The store is shared: the cases select, and one purge runs after them.
			got, err := s.PurgeCandidates(tc.filter.Match)
			must(t, err)
			if ids := runIDsOf(got); !slices.Equal(ids, tc.want) {
				t.Fatalf("candidates %v, want %v", ids, tc.want)
			}
		})
	}

	before, owner := dumpStore(t, s)
	// One batch whatever the machine's load: the time bound would cut a slow one in two.
	defer func(d time.Duration) { purgeSlice = d }(purgeSlice)
	purgeSlice = time.Hour
	cands, err := s.PurgeCandidates(history.PurgeFilter{ClosedBefore: purgeT0.Add(day)}.Match)
	must(t, err)
	var progress []int
	// Named but skipped: a run that is not there, an open run, a closed child of an open parent.
	purged, err := s.PurgeRuns(ctx, append(runIDsOf(cands), "no-such-run", open.RunID, lone.RunID), func(n int) { progress = append(progress, n) })
	must(t, err)
	want := []string{older.RunID, failed.RunID, old.RunID, parent.RunID, child.RunID}
	if ids := runIDsOf(purged); !slices.Equal(ids, want) {
		t.Fatalf("purged %v, want %v", ids, want)
	}
	if !slices.Equal(progress, []int{len(want)}) {
		t.Errorf("progress %v", progress)
	}
	after, _ := dumpStore(t, s)
	gone := map[string]bool{}
	for _, id := range want {
		gone[id] = true
	}
	for k, v := range before {
		run := owner[k]
		switch {
		case gone[run]:
			if _, ok := after[k]; ok {
				t.Errorf("%s of purged run %s remains", k, run)
			}
		case run == "" && (bytes.HasPrefix([]byte(k), []byte("workflows/")) || bytes.HasPrefix([]byte(k), []byte("counts/"))):
			// a head, a run count: checked by Check and by Runs below
		case !bytes.Equal(after[k], v):
			t.Errorf("%s of run %q changed or went: %q -> %q", k, run, v, after[k])
		}
	}
	noted := map[string]bool{}
	for k, v := range after {
		if _, ok := before[k]; ok {
			continue
		}
		if id, marked := bytes.CutPrefix(v, []byte{purgeMark}); bytes.HasPrefix([]byte(k), []byte("changes/")) && marked && gone[string(id)] && !noted[string(id)] {
			noted[string(id)] = true // the change feed names each purged run once, as a purge
			continue
		}
		t.Errorf("%s appeared", k)
	}
	if len(noted) != len(gone) {
		t.Errorf("the change feed names %d purged runs, %d were purged", len(noted), len(gone))
	}
	for _, id := range want {
		if _, err := s.Run(id); err == nil {
			t.Errorf("run %s still readable", id)
		}
		if evs, err := s.Events(id, 0); err == nil || len(evs) > 0 {
			t.Errorf("events of run %s still readable: %v", id, err)
		}
	}
	if rs, err := s.Runs(history.RunFilter{WorkflowID: "wf-old"}); err != nil || len(rs) != 0 {
		t.Errorf("wf-old lists %v, %v", runIDsOf(rs), err)
	}
	tasks, err := s.Tasks()
	must(t, err)
	for _, tk := range tasks {
		if gone[tk.RunID] {
			t.Errorf("task %s of purged run %s remains", tk.ID, tk.RunID)
		}
	}
	problems, err := s.Check()
	must(t, err)
	if len(problems) > 0 {
		t.Errorf("check after purge: %q", problems)
	}
	// The rest goes on: the open runs commit, and a purge again finds nothing more.
	commitRun(t, s, storetest.Next(open, history.ActivityScheduled, 1))
	again, err := s.PurgeCandidates(history.PurgeFilter{ClosedBefore: purgeT0.Add(day)}.Match)
	must(t, err)
	if len(again) != 0 {
		t.Errorf("second purge finds %v", runIDsOf(again))
	}
}

// TestPurgeBatches selects more runs than one read of the scan holds and purges them in
// several batches, with the log's open transaction holding commits between the batches, then
// reopens: what was purged stays purged, the rest is whole.
func TestPurgeBatches(t *testing.T) {
	defer func(d time.Duration) { purgeSlice = d }(purgeSlice)
	purgeSlice = time.Hour // batches of PurgeBatch runs exactly
	ctx := context.Background()
	path := t.TempDir() + "/wend.db"
	s := openAt(t, path, Options{})
	n := 2*max(purgeScanChunk, PurgeBatch) + 5
	ids := loadClosedRuns(t, s, n)
	open := startRun(t, s, "w", "wf-open", "open", "", purgeT0)
	cands, err := s.PurgeCandidates(history.PurgeFilter{}.Match)
	must(t, err)
	if got := runIDsOf(cands); !slices.Equal(got, ids) {
		t.Fatalf("%d candidates, want the %d closed runs in order", len(got), n)
	}
	var batches []int
	purged, err := s.PurgeRuns(ctx, ids, func(k int) {
		batches = append(batches, k)
		// A commit between two batches, held in the log's open transaction.
		open = commitNext(t, s, open)
	})
	must(t, err)
	if len(purged) != n || len(batches) != (n+PurgeBatch-1)/PurgeBatch || batches[0] != PurgeBatch || batches[len(batches)-1] != n {
		t.Fatalf("purged %d in %v", len(purged), batches)
	}
	must(t, s.Close())
	s = openAt(t, path, Options{})
	rs, err := s.Runs(history.RunFilter{})
	must(t, err)
	if len(rs) != 1 || rs[0].RunID != "open" || rs[0].LastSeq != open.LastSeq {
		t.Fatalf("after reopen: %+v", rs)
	}
	problems, err := s.Check()
	must(t, err)
	if len(problems) > 0 {
		t.Errorf("check: %q", problems)
	}
}

// TestPurgeCancelled stops between batches: the batches committed stay purged.
func TestPurgeCancelled(t *testing.T) {
	defer func(d time.Duration) { purgeSlice = d }(purgeSlice)
	purgeSlice = time.Hour
	s := openTemp(t)
	var ids []string
	for i := range PurgeBatch + 1 {
		id := fmt.Sprintf("r%04d", i)
		closeRun(t, s, startRun(t, s, "w", "wf", id, "", purgeT0), history.StatusCompleted, purgeT0.Add(time.Minute), false)
		ids = append(ids, id)
	}
	ctx, cancel := context.WithCancel(context.Background())
	purged, err := s.PurgeRuns(ctx, ids, func(int) { cancel() })
	if err == nil || len(purged) != PurgeBatch {
		t.Fatalf("purged %d, err %v", len(purged), err)
	}
	rs, err := s.Runs(history.RunFilter{WorkflowID: "wf"})
	must(t, err)
	if len(rs) != 1 {
		t.Fatalf("left %v", runIDsOf(rs))
	}
}

// TestPurgeBatchTimeBound: a batch stops deleting once its time is up, after one run at least,
// and the next batch goes on from the run after it: with no time at all, each batch deletes
// one run, and every run is purged, in order.
func TestPurgeBatchTimeBound(t *testing.T) {
	defer func(d time.Duration) { purgeSlice = d }(purgeSlice)
	purgeSlice = 0
	s := openTemp(t)
	ids := loadClosedRuns(t, s, 5)
	var batches []int
	purged, err := s.PurgeRuns(context.Background(), ids, func(k int) { batches = append(batches, k) })
	must(t, err)
	if got := runIDsOf(purged); !slices.Equal(got, ids) || !slices.Equal(batches, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("purged %v in batches %v, want %v one a batch", got, batches, ids)
	}
	rs, err := s.Runs(history.RunFilter{})
	must(t, err)
	if len(rs) != 0 {
		t.Fatalf("left %v", runIDsOf(rs))
	}
}

func commitNext(t *testing.T, s *Store, r history.Run) history.Run {
	t.Helper()
	u := storetest.Next(r, history.ActivityScheduled, 1)
	commitRun(t, s, u)
	return u.Run
}

func runIDsOf(rs []history.Run) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.RunID
	}
	return ids
}

// TestPurgeChildAfterParent: a child named before its parent is skipped; once its parent is
// gone, the filter selects it as any run.
func TestPurgeChildAfterParent(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	parent := startRun(t, s, "batch", "wf-p", "p", "", purgeT0)
	child := closeRun(t, s, startRun(t, s, "child", "wf-p/c", "c", parent.RunID, purgeT0), history.StatusCompleted, purgeT0.Add(time.Hour), false)
	closeRun(t, s, parent, history.StatusCompleted, purgeT0.Add(2*time.Hour), false)
	got, err := s.PurgeRuns(ctx, []string{child.RunID, parent.RunID}, nil)
	must(t, err)
	if ids := runIDsOf(got); !slices.Equal(ids, []string{parent.RunID}) {
		t.Fatalf("purged %v, want the parent alone", ids)
	}
	cands, err := s.PurgeCandidates(history.PurgeFilter{Workflow: "child"}.Match)
	must(t, err)
	if ids := runIDsOf(cands); !slices.Equal(ids, []string{child.RunID}) {
		t.Fatalf("candidates %v, want the child", ids)
	}
	got, err = s.PurgeRuns(ctx, runIDsOf(cands), nil)
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("purged %v", runIDsOf(got))
	}
	problems, err := s.Check()
	must(t, err)
	if len(problems) > 0 {
		t.Errorf("check: %q", problems)
	}
}
