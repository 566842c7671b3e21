package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/testkit/needs"
)

// storedRecord is one key and value of a bucket, as bbolt holds it.
type storedRecord struct {
	kind   string   // run, task, event, slot, index
	bucket []string // path from the root
	k, v   []byte
}

// flipDB builds the database the bit-flip test damages: runs of three workflows (one with two
// runs, one closed), their events, and tasks of two kinds.
func flipDB(t *testing.T, path string) {
	s := openAt(t, path, Options{InitialMmapSize: 1 << 20})
	ctx := context.Background()
	for i, wf := range []string{"order-7", "order-7", "invoice", "ship"} {
		id := fmt.Sprintf("run-%d", i)
		u := storetest.Started(wf, id, t0)
		must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}))
		u = storetest.Next(u.Run, history.ActivityScheduled, 3)
		task := history.Task{ID: id + "/timer/t1", RunID: id, Kind: history.TaskTimer, AvailableAt: t0,
			Data: json.RawMessage(`{"run_id":"` + id + `","step":"steps[0]","timer_id":"t1"}`)}
		act := history.Task{ID: "exec-" + strconv.Itoa(i) + "/1", RunID: id, Kind: history.TaskActivity, AvailableAt: t0,
			Data: json.RawMessage(`{"workflow_id":"` + wf + `","attempt":1,"input":{"n":` + strconv.Itoa(i) + `}}`)}
		must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{task, act}}))
		if i == 0 { // the first run of order-7 closes
			u = storetest.Next(u.Run, history.WorkflowCompleted, 1)
			u.Run.Status, u.Run.ClosedReason = history.ClosedBy(u.Events[0])
			u.Run.ClosedAt = u.Events[0].Time
			must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}, DeleteTasks: []string{task.ID, act.ID}}))
		}
	}
	must(t, s.Close())
}

// records lists every record of the database at path by kind (event buckets' own names are
// bbolt structure, not records, and are left to the page checks).
func records(t *testing.T, path string) []storedRecord {
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	defer db.Close()
	var out []storedRecord
	must(t, db.View(func(tx *bolt.Tx) error {
		add := func(kind string, b *bolt.Bucket, p ...string) {
			c := b.Cursor()
			for k, v := c.Seek(nil); k != nil; k, v = c.Next() {
				if v != nil {
					out = append(out, storedRecord{kind, p, slices.Clone(k), slices.Clone(v)})
				}
			}
		}
		add("run", tx.Bucket(bucketRuns), "runs")
		add("task", tx.Bucket(bucketTasks), "tasks")
		add("index", tx.Bucket(bucketWorkflows), "workflows")
		ev := tx.Bucket(bucketEvents)
		c := ev.Cursor()
		for k, _ := c.Seek(nil); k != nil; k, _ = c.Next() {
			add("event", ev.Bucket(k), "events", string(k))
		}
		add("slot", tx.Bucket(bucketRunSlots), "run_slots")
		runOf := map[string]string{}
		for _, r := range out {
			if r.kind == "slot" {
				slot, err := readSlot(r.k, r.v)
				must(t, err)
				runOf[string(slot)] = string(r.k)
			}
		}
		sc := tx.Bucket(bucketRunEvents).Cursor()
		for k, v := sc.Seek(nil); k != nil; k, v = sc.Next() {
			out = append(out, storedRecord{"event", []string{"run_events", runOf[string(k[:8])]}, slices.Clone(k), slices.Clone(v)})
		}
		return nil
	}))
	return out
}

// compact rewrites the database at src into dst without the stale page copies bbolt leaves
// behind, so each record's bytes occur once in the file.
func compact(t *testing.T, src, dst string) {
	in, err := bolt.Open(src, 0o600, &bolt.Options{ReadOnly: true})
	must(t, err)
	defer in.Close()
	out, err := bolt.Open(dst, 0o600, nil)
	must(t, err)
	must(t, bolt.Compact(out, in, 0))
	must(t, out.Close())
}

// flip inverts bit bit of rec's key and value (in that order, as a leaf page stores them) in
// the file image b, in place: a flipped key stays where the page has it, as rot leaves it. It
// reports false when rec's bytes do not occur exactly once in the file.
func flip(b []byte, rec storedRecord, bit int) bool {
	kv := append(slices.Clone(rec.k), rec.v...)
	at := bytes.Index(b, kv)
	if at < 0 || bytes.Contains(b[at+1:], kv) {
		return false
	}
	b[at+bit/8] ^= 1 << (bit % 8)
	return true
}

// readEverything reads the database through every read of the store: each result, or its error.
func readEverything(s *Store) map[string]string {
	out := map[string]string{}
	show := func(name string, v any, err error) {
		switch {
		case errors.Is(err, history.ErrNotFound):
			out[name] = "not found"
		case err != nil:
			out[name] = "error: " + err.Error()
		default:
			b, _ := json.Marshal(v)
			out[name] = string(b)
		}
	}
	runs, err := s.Runs(history.RunFilter{})
	show("runs", runs, err)
	for _, wf := range []string{"order-7", "invoice", "ship"} {
		rs, err := s.Runs(history.RunFilter{WorkflowID: wf})
		show("runs of "+wf, rs, err)
	}
	for i := range 4 {
		id := fmt.Sprintf("run-%d", i)
		r, err := s.Run(id)
		show("run "+id, r, err)
		evs, err := s.Events(id, 0)
		show("events of "+id, evs, err)
	}
	tasks, err := s.Tasks()
	show("tasks", tasks, err)
	return out
}

// TestBitFlipsAreNeverSilent is the bit-flip test over every kind of stored record (run,
// task, event, slot, index entry): 1,000 random single-bit flips (200 in the default loop) of a key or value, each in a fresh
// copy of the database. Each flip must change nothing any read returns, or be reported: every
// read whose answer changed fails instead (with an error other than "not found", somewhere), and
// wend check reports a problem. Before records had checksums, flips of run records went unseen
// (159 of 496).
func TestBitFlipsAreNeverSilent(t *testing.T) {
	dir := t.TempDir()
	built, pristine := filepath.Join(dir, "built.db"), filepath.Join(dir, "pristine.db")
	flipDB(t, built)
	compact(t, built, pristine)
	recs := records(t, pristine)
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[r.kind]++
	}
	if len(kinds) != 5 {
		t.Fatalf("records of kinds %v, want run, task, event, slot and index", kinds)
	}
	orig, err := os.ReadFile(pristine)
	must(t, err)
	base := func() map[string]string {
		s := openAt(t, pristine, Options{InitialMmapSize: 1 << 20})
		defer s.Close()
		return readEverything(s)
	}()
	for name, v := range base {
		if len(v) > 6 && v[:6] == "error:" || v == "not found" {
			t.Fatalf("the pristine database fails %s: %s", name, v)
		}
	}

	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 12))
	flips := needs.Size("", 200, 1000) // 1,000 under WEND_TEST_ALL=1
	path := filepath.Join(dir, "flipped.db")
	noEffect, reported, refused, silent, ambiguous := map[string]int{}, map[string]int{}, map[string]int{}, 0, 0
	for i := 0; i < flips; {
		rec := recs[rng.IntN(len(recs))]
		bit := rng.IntN(8 * (len(rec.k) + len(rec.v)))
		b := slices.Clone(orig)
		if !flip(b, rec, bit) {
			ambiguous++
			if ambiguous > flips {
				t.Fatalf("records' bytes are not unique in the file (%d tries)", ambiguous)
			}
			continue
		}
		i++
		must(t, os.WriteFile(path, b, 0o600))
		s, err := Open(path, Options{InitialMmapSize: 1 << 20})
		if err != nil {
			// The flip broke the page's key order: Open refuses the file, so reads and wend
			// check (which open it too) fail, naming the damage.
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("flip %d: open: %v", i, err)
			}
			refused[rec.kind]++
			continue
		}
		got := readEverything(s)
		problems, err := s.Check()
		must(t, err)
		must(t, s.Close())
		var changed []string
		damageSaid := false
		for name, want := range base {
			if got[name] == want {
				continue
			}
			changed = append(changed, name)
			if len(got[name]) > 6 && got[name][:6] == "error:" {
				damageSaid = true
			} else if got[name] != "not found" {
				silent++
				t.Errorf("flip %d (%s %q bit %d): %s reads %s, was %s", i, rec.kind, rec.k, bit, name, got[name], want)
			}
		}
		switch {
		case len(changed) == 0:
			noEffect[rec.kind]++
		case !damageSaid || len(problems) == 0:
			silent++
			t.Errorf("flip %d (%s %q bit %d): reads changed (%v) but damage reported by reads %v, by check %q", i, rec.kind, rec.k, bit, changed, damageSaid, problems)
		default:
			reported[rec.kind]++
		}
	}
	fmt.Printf("RELIABILITY suite=boltstore-bitflip flips=%d records=%d no_effect=%v reported=%v open_refused=%v silent=%d seed=%d\n",
		flips, len(recs), noEffect, reported, refused, silent, sd)
}

// TestEventKeyFlipsAtTheEdges: a flip in an event's key keeps the page's key order only at the
// ends of a history (event 1 becoming key 0, the last event a larger key), so those are the
// key flips Open cannot catch; reads must. Random flips hit them rarely.
func TestEventKeyFlipsAtTheEdges(t *testing.T) {
	dir := t.TempDir()
	built, pristine := filepath.Join(dir, "built.db"), filepath.Join(dir, "pristine.db")
	flipDB(t, built)
	compact(t, built, pristine)
	orig, err := os.ReadFile(pristine)
	must(t, err)
	var first, last storedRecord // run-0's: its last event (WorkflowCompleted) is its own
	for _, r := range records(t, pristine) {
		if r.kind == "event" && r.bucket[1] == "run-0" {
			if first.k == nil {
				first = r
			}
			last = r
		}
	}
	for _, tc := range []struct {
		name string
		rec  storedRecord
		bit  int // flip's numbering: byte bit/8 of the 8-byte big-endian seq key, mask 1<<(bit%8)
		read string
	}{
		{"event 1 under key 0", first, 56, "events"},
		{"the last event under a larger key", last, 59, "run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := slices.Clone(orig)
			if !flip(b, tc.rec, 8*(len(tc.rec.k)-8)+tc.bit) { // the seq key ends the key
				t.Fatal("record not unique in the file")
			}
			path := filepath.Join(t.TempDir(), "flipped.db")
			must(t, os.WriteFile(path, b, 0o600))
			s := openAt(t, path, Options{InitialMmapSize: 1 << 20})
			_, evErr := s.Events("run-0", 0)
			_, runErr := s.Run("run-0")
			if evErr == nil || tc.read == "run" && runErr == nil {
				t.Errorf("reads after the flip: events %v, run %v", evErr, runErr)
			}
			if ps, err := s.Check(); err != nil || len(ps) == 0 {
				t.Errorf("check: %q %v", ps, err)
			}
		})
	}
}
