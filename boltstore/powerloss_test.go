package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
	"github.com/wendflow/wend/testkit/needs"
)

// powerLoss simulates what a power loss or kernel crash leaves of a store written with the log
// on: the database file as of its last sync, plus any subset of the pages written since (lost
// in any order, a page at a time), and the log as synced (every acknowledged append).
//
// The store's sync points call testHookSynced, which keeps an image of the file then: the
// "synced image". The copy may include writes made after the sync (the writer does not stop for
// it); that is one of the outcomes a power loss can have too. world makes each step of a
// checkpoint atomic with respect to the moment of the loss.
type powerLoss struct {
	path      string
	world     sync.Mutex
	mu        sync.Mutex
	synced    []byte
	syncedSeq uint64
	seq       atomic.Uint64
}

// capture keeps an image of the file. Captures may overlap (the checkpointer's and the writer's,
// under synced commits): the one begun last holds the most, and is kept.
func (pl *powerLoss) capture() {
	n := pl.seq.Add(1)
	b, err := os.ReadFile(pl.path)
	if err != nil {
		panic(err)
	}
	pl.mu.Lock()
	if n > pl.syncedSeq {
		pl.synced, pl.syncedSeq = b, n
	}
	pl.mu.Unlock()
}

// install sets the test hooks for pl; the returned function restores them.
func (pl *powerLoss) install() func() {
	testHookSync = func() { pl.capture() }
	testHookCheckpoint = func(step string) {
		switch step {
		case "start":
			pl.world.Lock()
		case "done":
			pl.world.Unlock()
		default: // between two steps: the power may go here
			pl.world.Unlock()
			pl.world.Lock()
		}
	}
	return func() {
		testHookSync = func() {}
		testHookCheckpoint = func(string) {}
	}
}

// lossImage is the files a power loss leaves: the database and the log folder's files.
type lossImage struct {
	db  []byte
	log map[string][]byte
}

// cut takes the state of the files now (the power goes) and builds what survives: the synced
// image with a random subset of the pages that differ now, the log folder's files as they are.
func (pl *powerLoss) cut(rng *rand.Rand) (lossImage, int, error) {
	pl.world.Lock()
	defer pl.world.Unlock()
	cur, err := os.ReadFile(pl.path)
	if err != nil {
		return lossImage{}, 0, err
	}
	logs, err := readLogFolder(walDir(pl.path))
	if err != nil {
		return lossImage{}, 0, err
	}
	img := lossImage{log: logs}
	pl.mu.Lock()
	synced := slices.Clone(pl.synced)
	pl.mu.Unlock()
	pageSize := int(binary.LittleEndian.Uint32(synced[metaPageSize:]))
	db := make([]byte, len(cur))
	copy(db, synced)
	lost := 0
	for off := 0; off < len(cur); off += pageSize {
		now := cur[off:min(off+pageSize, len(cur))]
		if bytes.Equal(now, db[off:off+len(now)]) {
			continue
		}
		if rng.IntN(2) == 0 {
			copy(db[off:], now) // this write reached the disk
		} else {
			lost++
		}
	}
	img.db = db
	return img, lost, nil
}

// readLogFolder reads every file of the log folder, again while one vanishes between the
// listing and its reading: the spare's preparation renames files outside the checkpoint's
// steps, and the power goes at one moment.
func readLogFolder(dir string) (map[string][]byte, error) {
	for {
		ents, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			return map[string][]byte{}, nil
		}
		if err != nil {
			return nil, err
		}
		out, vanished := map[string][]byte{}, false
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if os.IsNotExist(err) {
				vanished = true
				break
			}
			if err != nil {
				return nil, err
			}
			out[e.Name()] = b
		}
		if !vanished {
			return out, nil
		}
	}
}

// recordsEnd walks a segment's whole, valid records from the start (LSN first) and returns where
// they end and the LSN the next would have.
func recordsEnd(b []byte, first uint64) (int, uint64) {
	off, next := 0, first
	for off+walHeader <= len(b) {
		n := int(binary.BigEndian.Uint32(b[off:]))
		lsn := binary.BigEndian.Uint64(b[off+8:])
		if n == 0 || off+walHeader+n > len(b) || lsn != next ||
			walSum(b[off+8:off+16], b[off+walHeader:off+walHeader+n]) != binary.BigEndian.Uint32(b[off+4:]) {
			break
		}
		off, next = off+walHeader+n, lsn+1
	}
	return off, next
}

// tornAppend is a part of a record that was being appended when the power went: a prefix of a
// genuine record (its header says the length it would have), or zeros a file system left.
func tornAppend(rng *rand.Rand, lsn uint64) []byte {
	if rng.IntN(3) == 0 {
		return make([]byte, 1+rng.IntN(600))
	}
	p := payload(10 + rng.IntN(500))
	b := make([]byte, walHeader, walHeader+len(p))
	binary.BigEndian.PutUint32(b[0:], uint32(len(p)))
	binary.BigEndian.PutUint64(b[8:], lsn)
	binary.BigEndian.PutUint32(b[4:], walSum(b[8:16], p))
	b = append(b, p...)
	return b[:1+rng.IntN(len(b)-1)]
}

// powerModel is what the store acknowledged: each run's events and the tasks.
type powerModel struct {
	runs  map[string]history.Run
	evs   map[string][]history.Event
	tasks map[string]history.Task
}

// step commits one event to run id (starting it if new), replacing its task; it returns the
// commit, for the model to take once acknowledged.
func (m *powerModel) commit(rng *rand.Rand, id string) (history.Commit, func()) {
	var u history.RunUpdate
	r, ok := m.runs[id]
	if !ok {
		u = storetest.Started("wf-"+id[:2], id, t0)
	} else {
		u = storetest.Next(r, history.ActivityCompleted, 1+rng.IntN(2))
		for i := range u.Events {
			u.Events[i].Data = payload(rng.IntN(3000))
		}
	}
	task := history.Task{ID: fmt.Sprintf("%s-%d", id, u.Run.LastSeq), RunID: id, Kind: history.TaskActivity, AvailableAt: t0}
	c := history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{task}}
	if ok {
		c.DeleteTasks = []string{fmt.Sprintf("%s-%d", id, r.LastSeq)}
	}
	return c, func() {
		m.runs[id] = u.Run
		m.evs[id] = append(m.evs[id], u.Events...)
		for _, d := range c.DeleteTasks {
			delete(m.tasks, d)
		}
		m.tasks[task.ID] = task
	}
}

// verify compares the reopened store with the model: every acknowledged event and task is
// there, nothing else is.
func (m *powerModel) verify(s *Store, ids []string) []string {
	var out []string
	for _, id := range ids {
		want := m.evs[id]
		got, err := s.Events(id, 0)
		if len(want) == 0 && errors.Is(err, history.ErrNotFound) {
			continue // never started, and not there
		}
		if err != nil {
			out = append(out, fmt.Sprintf("run %s: %v", id, err))
			continue
		}
		if len(got) != len(want) {
			out = append(out, fmt.Sprintf("run %s: %d events, %d acknowledged", id, len(got), len(want)))
			continue
		}
		for i := range got {
			if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Data, want[i].Data) {
				out = append(out, fmt.Sprintf("run %s: event %d differs", id, want[i].Seq))
				break
			}
		}
	}
	ts, err := s.Tasks()
	if err != nil {
		return append(out, fmt.Sprintf("tasks: %v", err))
	}
	seen := map[string]bool{}
	for _, task := range ts {
		seen[task.ID] = true
		if _, ok := m.tasks[task.ID]; !ok {
			out = append(out, fmt.Sprintf("task %s: not acknowledged, or deleted", task.ID))
		}
	}
	for id := range m.tasks {
		if !seen[id] {
			out = append(out, fmt.Sprintf("task %s: acknowledged, missing", id))
		}
	}
	return out
}

// TestPowerLoss (docs/reliability.md A13): with the log on, a power loss at any moment (between
// commits, or between two steps of a checkpoint) loses only unsynced writes, in any order, a page
// at a time, and may leave a torn append at the log's end. Whatever subset of the pages written
// since the last sync survives, the database opens, checks clean, and holds exactly the
// acknowledged commits. Many seeds; each trial writes a fresh store with small log segments (so
// it checkpoints every few commits) and a small mmap (so it remaps).
func TestPowerLoss(t *testing.T) {
	asGiven(t)
	sd := seed(t)
	// 20 trials in the default loop, 100 under WEND_TEST_ALL=1; under -short and -race, 20:
	// .ci/run runs the full count without -race on the portable paths (-tags wend_portable),
	// which share the log and checkpoint code.
	trials := kills(t, needs.Size("", 20, 100))
	if (testing.Short() || raceDetector) && os.Getenv("WEND_KILLS") == "" {
		trials = 20
	}
	rng := rand.New(rand.NewPCG(sd, 3))
	var damaged, lossy, failed, pagesLost, checkpoints int
	for trial := range trials {
		problems, lost, ckpts := powerLossTrial(t, rng)
		pagesLost += lost
		checkpoints += ckpts
		if len(problems) > 0 {
			failed++
			for _, p := range problems {
				if bytes.Contains([]byte(p), []byte("acknowledged")) {
					lossy++
				} else {
					damaged++
				}
			}
			if failed <= 5 {
				t.Errorf("trial %d (seed %d): %d problems: %q", trial, sd, len(problems), problems)
			}
		}
	}
	fmt.Printf("RELIABILITY suite=boltstore-power-loss trials=%d checkpoints=%d pages_lost=%d failed_trials=%d damage=%d lost_or_extra=%d seed=%d\n",
		trials, checkpoints, pagesLost, failed, damaged, lossy, sd)
}

// powerLossTrial writes a store until a random moment, cuts the power, reopens what survives and
// returns what is wrong with it, how many written pages were lost and how many checkpoints ran.
func powerLossTrial(t *testing.T, rng *rand.Rand) (problems []string, pagesLost, checkpoints int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wend.db")
	pl := &powerLoss{path: path}
	restore := pl.install()
	defer restore()
	opts := Options{
		LogSegmentSize:  []int64{4 << 10, 16 << 10, 64 << 10}[rng.IntN(3)],
		InitialMmapSize: []int{128 << 10, 512 << 10, 1 << 20}[rng.IntN(3)],
	}
	s, err := Open(path, opts)
	must(t, err)
	if rng.IntN(2) == 0 {
		// A checkpoint after every batch: bbolt commits (synced) as often as it can.
		s.openMax = 1
	}
	pl.capture() // Open syncs what it replayed: the file as opened is the synced state
	m := &powerModel{runs: map[string]history.Run{}, evs: map[string][]history.Event{}, tasks: map[string]history.Task{}}
	var ids []string
	for i := range 1 + rng.IntN(4) {
		ids = append(ids, fmt.Sprintf("r%d-%d", i, rng.IntN(1000)))
	}
	ctx := context.Background()
	n := 1 + rng.IntN(250)
	for range n {
		if rng.IntN(5) > 0 || len(ids) < 2 {
			c, ack := m.commit(rng, ids[rng.IntN(len(ids))])
			must(t, s.Commit(ctx, c))
			ack()
			continue
		}
		// Several runs at once: commits that share a batch.
		var wg sync.WaitGroup
		acks := make([]func(), len(ids))
		errs := make([]error, len(ids))
		for i, id := range ids {
			c, ack := m.commit(rng, id)
			acks[i] = ack
			wg.Go(func() { errs[i] = s.Commit(ctx, c) })
		}
		wg.Wait()
		for i := range ids {
			must(t, errs[i])
			acks[i]()
		}
	}
	img, lost, err := pl.cut(rng)
	must(t, err)
	checkpoints = int(s.checkpoints.Load())
	must(t, s.Close())
	restore()

	// Reboot: lay out what survived and open it.
	path2 := filepath.Join(t.TempDir(), "wend.db")
	must(t, os.WriteFile(path2, img.db, 0o600))
	if len(img.log) > 0 {
		must(t, os.Mkdir(walDir(path2), 0o700))
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range img.log {
			if !yield(k) {
				return
			}
		}
	})
	newest := ""
	for _, name := range names {
		if filepath.Ext(name) == ".log" {
			newest = name
		}
	}
	for _, name := range names {
		b := img.log[name]
		if name == newest && rng.IntN(3) == 0 {
			// The torn append lands where the records end, in the preallocated tail.
			first, err := segmentLSN(name)
			must(t, err)
			end, next := recordsEnd(b, first)
			// What follows the torn bytes is what the file held there: a recycled segment's
			// stale records. A test payload's missing tail may match them byte for byte, which
			// makes a whole record of it, one no writer made (its payload is not a batch);
			// such a draw is made again.
			for whole := true; whole; {
				torn := tornAppend(rng, next)
				torn = torn[:min(len(torn), len(img.log[name])-end)] // an append never grows a segment
				b = append(img.log[name][:end:end], torn...)
				b = append(b, img.log[name][min(len(b), len(img.log[name])):]...)
				got, _ := recordsEnd(b, first)
				whole = got != end
			}
		}
		must(t, os.WriteFile(filepath.Join(walDir(path2), name), b, 0o600))
	}
	s2, err := Open(path2, Options{NoLog: rng.IntN(2) == 0})
	if err != nil {
		return []string{fmt.Sprintf("open after power loss: %v", err)}, lost, checkpoints
	}
	defer s2.Close()
	ps, err := s2.Check()
	if err != nil {
		return []string{fmt.Sprintf("check: %v", err)}, lost, checkpoints
	}
	if len(ps) > 0 {
		return append([]string{"check:"}, ps...), lost, checkpoints
	}
	out := m.verify(s2, ids)
	if len(out) > 0 {
		lsn, _ := s2.logLSN()
		t.Logf("after %d commits (%+v): log folder %v, the database at LSN %d", n, opts, names, lsn)
	}
	return out, lost, checkpoints
}
