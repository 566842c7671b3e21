package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestDamagedInlineBucket (docs/reliability.md A3): a small bucket is stored inline, as a page
// inside its parent's value. With that page zeroed after Open (rot under a running store: Open's
// walk has passed), bbolt's First, behind ForEach, takes it for a branch pointing at itself and
// loops for ever, growing its cursor's stack. Check reports the bucket damaged instead, naming
// it, and every read that crosses it fails with ErrDamaged; the others read as before.
func TestDamagedInlineBucket(t *testing.T) {
	for _, c := range []struct {
		bucket []string
		reads  []string // the reads that cross the bucket
	}{
		{[]string{"tasks"}, []string{"tasks"}},
		{[]string{"workflows"}, []string{"runs of wf"}},
		{[]string{"runs"}, []string{"run", "runs", "runs of wf"}},
		{[]string{"run_events"}, []string{"run", "runs", "runs of wf", "events"}},
		{[]string{"run_slots"}, []string{"run", "runs", "runs of wf", "events"}},
	} {
		t.Run(strings.Join(c.bucket, "/"), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wend.db")
			s := openAt(t, path, Options{InitialMmapSize: 1 << 20})
			u := storetest.Started("wf", "r1", t0)
			task := history.Task{ID: "t1", RunID: "r1", Kind: history.TaskActivity, AvailableAt: t0}
			must(t, s.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{task}}))
			commitRun(t, s, storetest.Next(u.Run, history.ActivityCompleted, 2))
			must(t, s.settle()) // in bbolt's file, not in its open transaction

			zeroInline(t, path, c.bucket...)

			stop := watchLoop()
			ps, errs := readDamaged(s)
			stop()
			want := fmt.Sprintf("bucket %q: %v", c.bucket, ErrDamaged)
			if errs["check"] != nil || len(ps) != 1 || !strings.Contains(ps[0], want) {
				t.Errorf("check: %q, %v; want one problem saying %q", ps, errs["check"], want)
			}
			delete(errs, "check")
			for name, err := range errs {
				if slices.Contains(c.reads, name) {
					if !errors.Is(err, ErrDamaged) {
						t.Errorf("%s: %v; want ErrDamaged", name, err)
					}
				} else if err != nil {
					t.Errorf("%s, not crossing the bucket: %v", name, err)
				}
			}
		})
	}
}

// TestDamagedPageFailsTheStore: a commit that meets a page damaged after Open (here the run's
// inline shared events bucket, zeroed) fails the store with ErrDamaged, rather than panicking in the
// committing goroutine and leaving its transaction open; later commits are refused at once and
// Close returns.
func TestDamagedPageFailsTheStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{InitialMmapSize: 1 << 20})
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	next := storetest.Next(u.Run, history.ActivityCompleted, 2)
	commitRun(t, s, next)
	must(t, s.settle()) // in bbolt's file, not in its open transaction

	zeroInline(t, path, "run_events")

	stop := watchLoop()
	defer stop()
	c := history.Commit{Runs: []history.RunUpdate{storetest.Next(next.Run, history.ActivityCompleted, 1)}}
	if err := s.Commit(t.Context(), c); !errors.Is(err, ErrDamaged) {
		t.Fatalf("commit over a damaged page: %v; want ErrDamaged", err)
	}
	if !errors.Is(s.Err(), ErrDamaged) {
		t.Fatalf("store error after it: %v", s.Err())
	}
	other := history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r2", t0)}}
	if err := s.Commit(t.Context(), other); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a later commit: %v; want the store's ErrDamaged", err)
	}
	if err := s.Close(); !errors.Is(err, ErrDamaged) { // a failed store's Close says why
		t.Fatalf("close: %v", err)
	}
}

// zeroInline zeroes, in the database file at path, the inline page of a bucket, under an
// open store: its mmap is shared, so what is written to the file, its reads see.
func zeroInline(t *testing.T, path string, bucket ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	off, n := inlinePage(t, b, bucket...)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt(make([]byte, n), int64(off))
	must(t, err)
	must(t, f.Close())
}

// readDamaged runs Check and each read of the public API, and returns Check's problems and
// every call's error by name.
func readDamaged(s *Store) ([]string, map[string]error) {
	errs := map[string]error{}
	ps, err := s.Check()
	errs["check"] = err
	_, errs["run"] = s.Run("r1")
	_, errs["runs"] = s.Runs(history.RunFilter{})
	_, errs["runs of wf"] = s.Runs(history.RunFilter{WorkflowID: "wf"})
	_, errs["events"] = s.Events("r1", 0)
	_, errs["tasks"] = s.Tasks()
	return ps, errs
}

// watchLoop starts a watchdog over a read of a damaged file and returns what stops it. A read
// looping on a damaged page can be neither stopped nor left running (bbolt's loop allocates
// about 0.5 GB a second), so past a generous bound, of heap growth or of time, the watchdog
// panics in a goroutine of its own. That ends the test binary at once, with every goroutine's
// stack, as go test -timeout does: a cleanup waiting for the read (Close waits for every reader)
// cannot hold it up, as it would a panic of the test's goroutine.
func watchLoop() (stop func()) {
	done := make(chan struct{})
	go func() {
		debug.SetTraceback("all") // the stack of the looping read too
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		limit := ms.HeapAlloc + 1<<30
		deadline := time.After(2 * time.Minute)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-deadline:
				panic("reading a damaged database did not return in 2 minutes")
			case <-tick.C:
				if runtime.ReadMemStats(&ms); ms.HeapAlloc > limit {
					panic(fmt.Sprintf("reading a damaged database has grown the heap to %d MiB: it loops", ms.HeapAlloc>>20))
				}
			}
		}
	}()
	return func() { close(done) }
}

// bbolt's layout, past what meta_test.go names: the meta's root bucket (its root pgid first);
// a page header (id 8 bytes, flags 2, count 2, overflow 4); a leaf element (flags, pos, ksize,
// vsize: 4 bytes each, the key at pos from the element, the value after it); a bucket value's
// header (root pgid, sequence: 8 bytes each), followed by the page of an inline bucket.
const (
	metaRoot     = metaOffset + 16
	pageHeader   = 16
	leafElement  = 16
	leafFlag     = 0x02
	bucketHeader = 16
)

// inlinePage returns the file offset and size of the page of the inline bucket at path, found
// from the newest meta page through the leaf pages of the buckets above it.
func inlinePage(t *testing.T, b []byte, path ...string) (off, size int) {
	t.Helper()
	pageSize := int(binary.LittleEndian.Uint32(b[metaPageSize:]))
	meta := 0
	if txid(b, 1, pageSize) > txid(b, 0, pageSize) {
		meta = 1
	}
	page := int(binary.LittleEndian.Uint64(b[meta*pageSize+metaRoot:])) * pageSize
	for i, name := range path {
		p := b[page : page+pageSize]
		if flags := binary.LittleEndian.Uint16(p[8:]); flags != leafFlag {
			t.Fatalf("bucket %q: page flags %#x, want a single leaf page", path[:i], flags)
		}
		v, vsize := -1, 0
		for e := range int(binary.LittleEndian.Uint16(p[10:])) {
			el := pageHeader + e*leafElement
			u32 := func(at int) int { return int(binary.LittleEndian.Uint32(p[el+at:])) }
			k := el + u32(4)
			if string(p[k:k+u32(8)]) == name {
				v, vsize = k+u32(8), u32(12)
				break
			}
		}
		if v < 0 {
			t.Fatalf("bucket %q not found", path[:i+1])
		}
		root := int(binary.LittleEndian.Uint64(p[v:]))
		if i < len(path)-1 {
			page = root * pageSize
			continue
		}
		if root != 0 {
			t.Fatalf("bucket %q is not inline: its root is page %d", path, root)
		}
		off, size = page+v+bucketHeader, vsize-bucketHeader
	}
	return off, size
}

// TestSeekIteration: forEach and lastKey read what bbolt's ForEach and Last do, in buckets
// inline and of several pages, nested buckets and an empty one included.
func TestSeekIteration(t *testing.T) {
	s := openTemp(t)
	for i, n := range []int{2, 3000} {
		u := storetest.Started("wf", fmt.Sprintf("r%d", i), t0)
		commitRun(t, s, u)
		commitRun(t, s, storetest.Next(u.Run, history.ActivityCompleted, n))
	}
	type pair struct{ k, v []byte }
	collect := func(each func(func(k, v []byte) error) error) []pair {
		var out []pair
		must(t, each(func(k, v []byte) error {
			out = append(out, pair{bytes.Clone(k), bytes.Clone(v)})
			return nil
		}))
		return out
	}
	must(t, s.settle()) // the trees as bbolt's file holds them, not the open transaction's
	must(t, s.view("compare", func(tx *bolt.Tx) error {
		events := tx.Bucket(bucketEvents)
		buckets := map[string]*bolt.Bucket{"runs": tx.Bucket(bucketRuns), "workflows": tx.Bucket(bucketWorkflows),
			"tasks (empty)": tx.Bucket(bucketTasks), "events": events, "run_events": tx.Bucket(bucketRunEvents),
			"run_slots": tx.Bucket(bucketRunSlots), "events/r1": events.Bucket([]byte("r1"))}
		for name, b := range buckets {
			got, want := collect(func(fn func(k, v []byte) error) error { return forEach(b, fn) }), collect(b.ForEach)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: forEach read %d keys, ForEach %d, or other ones", name, len(got), len(want))
			}
			if k, _ := b.Cursor().Last(); !bytes.Equal(lastKey(b), k) {
				t.Errorf("%s: lastKey %x, Last %x", name, lastKey(b), k)
			}
		}
		if r1 := buckets["events/r1"]; r1.Root() == 0 || r1.Stats().Depth < 2 {
			t.Errorf("events/r1 has root page %d and depth %d: want a tree of several pages", r1.Root(), r1.Stats().Depth)
		}
		if r0 := buckets["run_events"]; r0.Root() != 0 {
			t.Errorf("run_events, holding r0's events alone, has root page %d: want it inline", r0.Root())
		}
		return nil
	}))
}
