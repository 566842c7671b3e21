package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// asGiven makes Open follow its Options whatever WEND_STORE_LOG the suite runs with: the tests of
// the log need it on (the default), some also off.
func asGiven(t testing.TB) { t.Setenv(logFromEnv, "") }

// append puts payload as the record l.next and syncs it, as the writer does around bbolt's
// commit; when it returns nil the record is durable.
func (l *wal) append(payload []byte) (lsn uint64, err error) {
	if lsn, err = l.put(payload); err != nil {
		return 0, err
	}
	return lsn, l.sync()
}

// helperLogWriter is helperWriter with the log on, in segments small enough that it checkpoints
// every few commits; arg names a checkpoint step to kill itself at ("" for none).
func helperLogWriter(path, arg string) error {
	os.Unsetenv(logFromEnv) // the log, whatever the suite runs with
	if arg != "" {
		testHookCheckpoint = func(step string) {
			if step == arg {
				killSelf()
			}
		}
		testHookRoll = func(step string) {
			if "roll "+step == arg {
				killSelf()
			}
		}
	}
	return helperWriter(path, Options{LogSegmentSize: 16 << 10})
}

// TestKillLogWriter (docs/reliability.md A11, A12): a writer with the log on, checkpointing every
// few commits, is SIGKILLed at each step of a checkpoint (before bbolt's sync, after it, after
// the segments' removal), in a roll (the next segment installed, the roll record not yet
// written: walcheck.go must not take that for damage) and at random times; after each kill the database opens, alternately
// with and without the log, holds every acknowledged event, and checks clean; a Close leaves no
// log behind.
func TestKillLogWriter(t *testing.T) {
	asGiven(t)
	if testing.Short() {
		t.Skip("crash test")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 2))
	path := filepath.Join(t.TempDir(), "wend.db")
	keepOnFailure(t, path, sd)
	steps := []string{"start", "synced", "removed", "roll installed"}
	n := max(kills(t, 12), 2*len(steps))
	var ackedMax uint64
	lost, checkErrors := 0, 0
	for i := range n {
		arg, delay := "", time.Duration(rng.IntN(150_000))*time.Microsecond
		if i < 2*len(steps) {
			arg, delay = steps[i%len(steps)], -1
		}
		acked := killHelperOnce(t, "logwriter", arg, path, delay)
		ackedMax = max(ackedMax, acked)
		if names, err := segments(walDir(path)); arg == "roll installed" && (err != nil || len(names) < 2) {
			t.Fatalf("kill %d in a roll left segments %v (%v), want the closed one and the one installed", i, names, err)
		}
		s, err := Open(path, Options{NoLog: i%2 != 0})
		if err != nil {
			t.Fatalf("kill %d (%q): reopen: %v", i, arg, err)
		}
		evs, err := s.Events("r1", 0)
		if err != nil {
			t.Errorf("kill %d (%q): %v", i, arg, err)
			checkErrors++
		}
		if persisted := uint64(len(evs)); persisted < acked {
			t.Errorf("kill %d (%q): acknowledged seq %d, but %d events persisted", i, arg, acked, persisted)
			lost += int(acked - persisted)
		}
		ps, err := s.Check()
		must(t, err)
		for _, p := range ps {
			t.Errorf("kill %d (%q): check: %s", i, arg, p)
		}
		checkErrors += len(ps)
		must(t, s.Close())
		if _, err := os.Stat(walDir(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("kill %d: after Close the log folder is still there (%v)", i, err)
		}
	}
	fmt.Printf("RELIABILITY suite=boltstore-log-kill kills=%d checkpoint_kills=%d acked_max=%d events_lost=%d check_errors=%d seed=%d\n",
		n, 2*len(steps), ackedMax, lost, checkErrors, sd)
}

// helperReplayer opens the database, replaying its log, and kills itself once arg records are
// applied (before bbolt is synced), or after the sync when arg is "synced".
func helperReplayer(path, arg string) error {
	n, _ := strconv.Atoi(arg)
	applied := 0
	testHookReplay = func(step string) {
		if step == "applied" {
			applied++
		}
		if (step == "applied" && applied == n) || step == arg {
			killSelf()
		}
	}
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	return s.Close()
}

// TestKillDuringReplay (docs/reliability.md A11): a process killed while it replays the log (after
// some records, before bbolt is synced; after the sync, before the log is removed) leaves what
// the next Open replays again, to the same end: replay can be cut and redone.
func TestKillDuringReplay(t *testing.T) {
	asGiven(t)
	if testing.Short() {
		t.Skip("crash test")
	}
	img, _, _, _, seq := laggingImage(t, 30, 500, 4<<10)
	for _, at := range []string{"1", "7", strconv.FormatUint(seq-1, 10), "synced"} {
		t.Run(at, func(t *testing.T) {
			path := img.write(t)
			cmd := helper(t, "replayer", path, at)
			if code := exitCode(cmd.Run()); code != -1 && code != 137 {
				t.Fatalf("the replayer killed at %q exited %d", at, code)
			}
			_, got, err := reopened(t, path)
			must(t, err)
			if got != seq {
				t.Fatalf("after a kill during replay at %q the run ends at %d, want %d", at, got, seq)
			}
		})
	}
}

// exitCode is a finished command's exit code, -1 when a signal ended it.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -2
	}
	return 0
}

// crashImage is what a crash leaves: a database file and its log's segments, by name.
type crashImage struct {
	db       []byte
	segments map[string][]byte
}

// write lays the image out in a fresh folder and returns the database's path.
func (c crashImage) write(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wend.db")
	must(t, os.WriteFile(path, c.db, 0o600))
	must(t, os.Mkdir(walDir(path), 0o700))
	for name, b := range c.segments {
		must(t, os.WriteFile(filepath.Join(walDir(path), name), b, 0o600))
	}
	return path
}

// laggingImage commits run r1's start and then n more one-event commits with the log on, and
// returns the image of a crash in which bbolt holds only the start and the log every commit:
// what a crash leaves when bbolt's unsynced pages are lost. It also returns the last segment's
// name, the offsets of the last record in it and of its end (zeros follow, to the segment's
// preallocated size), and the seq the run ends at: 1+n, or more when a commit must be added so
// the last record does not end a segment. size sets each event's payload; segment, the segment
// size (no checkpoint runs: holdCheckpoints).
func laggingImage(t *testing.T, n, size int, segment int64) (img crashImage, last string, off, end int64, seq uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{LogSegmentSize: segment})
	must(t, err)
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	must(t, s.settle()) // bbolt commits the start
	db, err := os.ReadFile(path)
	must(t, err)
	s.holdCheckpoints = true
	for i := 0; i < n || s.log.size == 0; i++ {
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(size + i)
		off = s.log.size
		commitRun(t, s, u)
	}
	end = s.log.size
	names, err := segments(walDir(path))
	must(t, err)
	img = crashImage{db: db, segments: map[string][]byte{}}
	for _, name := range names {
		b, err := os.ReadFile(name)
		must(t, err)
		img.segments[filepath.Base(name)] = b
	}
	id, err := os.ReadFile(filepath.Join(walDir(path), logIDName)) // the log is the database's own
	must(t, err)
	img.segments[logIDName] = id
	must(t, s.Close())
	return img, filepath.Base(names[len(names)-1]), off, end, u.Run.LastSeq
}

// reopened opens the image and returns the store and the seq run r1 ends at.
func reopened(t *testing.T, path string) (*Store, uint64, error) {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		return nil, 0, err
	}
	t.Cleanup(func() { s.Close() })
	r, err := s.Run("r1")
	must(t, err)
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Errorf("check: %q %v", ps, err)
	}
	return s, r.LastSeq, nil
}

// TestLogTornTail (docs/reliability.md A11, A13): recovery replays the log past what bbolt
// holds; an append torn anywhere (a crash or a full disk mid-write: part of its header, part of
// its payload, its bytes zeroed or wrong) is dropped, and every record before it is replayed,
// whether zeros follow its records (its preallocated tail) or, in a segment an older wend named
// without its size, they fill the file to its end. Damage before the last record is an error,
// never records silently dropped.
func TestLogTornTail(t *testing.T) {
	asGiven(t)
	img, last, off, end, n := laggingImage(t, 40, 500, 1<<20)
	n-- // the seq of the commit before the last
	seg := img.segments[last]
	if int64(len(seg)) != 1<<20 || !bytes.Equal(seg[end:], make([]byte, len(seg)-int(end))) {
		t.Fatalf("the segment is %d bytes, records to %d: want it preallocated to 1 MiB, zeros after its records", len(seg), end)
	}
	with := func(f func(b []byte) []byte) crashImage {
		c := crashImage{db: img.db, segments: map[string][]byte{}}
		for k, v := range img.segments {
			c.segments[k] = v
		}
		c.segments[last] = f(append([]byte(nil), seg...))
		return c
	}
	// A segment that ends at the file's end is one an older wend left: named without its size,
	// its last record may run past its filling. A segment named with its size and cut short is
	// damage (TestLogDamagedSegmentsAreRefused).
	first, _, _ := parseSegment(last)
	unsized := fmt.Sprintf("%016x.log", first)
	withUnsized := func(f func(b []byte) []byte) crashImage {
		c := with(f)
		c.segments[unsized] = c.segments[last]
		delete(c.segments, last)
		return c
	}
	cases := []struct {
		name string
		img  crashImage
		want uint64 // the seq r1 ends at; 0: Open fails with ErrDamaged
	}{
		{"intact", img, n + 1},
		{"last record's payload flipped", with(func(b []byte) []byte { b[end-3] ^= 1; return b }), n},
		{"last record zeroed", with(func(b []byte) []byte { clear(b[off:]); return b }), n},
		{"last record's second half zeroed", with(func(b []byte) []byte { clear(b[(off+end)/2:]); return b }), n},
		{"a record before the last flipped", with(func(b []byte) []byte { b[off-3] ^= 1; return b }), 0},
		{"a stray byte after the last record", with(func(b []byte) []byte { b[end] = 7; return b }), n + 1},
		{"ends at the file's end: intact", withUnsized(func(b []byte) []byte { return b[:end] }), n + 1},
		{"ends at the file's end: last record's payload flipped", withUnsized(func(b []byte) []byte { b[end-3] ^= 1; return b[:end] }), n},
		{"ends at the file's end: a record before the last flipped", withUnsized(func(b []byte) []byte { b[off-3] ^= 1; return b[:end] }), 0},
		{"ends at the file's end: a stray byte after the last record", withUnsized(func(b []byte) []byte { return append(b[:end], 7) }), n + 1},
		{"ends at the file's end: zeros after the last record", withUnsized(func(b []byte) []byte { return append(b[:end], make([]byte, 4096)...) }), n + 1},
	}
	for _, cut := range []int64{1, 4, 8, 15, 16, 17, 100, end - off - 1} {
		zeroed := n
		if bytes.Count(seg[off+cut:end], []byte{0}) == int(end-off-cut) {
			zeroed = n + 1 // those bytes were zeros already: the record is whole
		}
		cases = append(cases, struct {
			name string
			img  crashImage
			want uint64
		}{fmt.Sprintf("last record zeroed from %d bytes into it", cut), with(func(b []byte) []byte { clear(b[off+cut:]); return b }), zeroed},
			struct {
				name string
				img  crashImage
				want uint64
			}{fmt.Sprintf("ends at the file's end: cut %d bytes into the last record", cut), withUnsized(func(b []byte) []byte { return b[:off+cut] }), n})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.img.write(t)
			_, got, err := reopened(t, path)
			switch {
			case tc.want == 0 && !errors.Is(err, ErrDamaged):
				t.Fatalf("open: %v, want ErrDamaged", err)
			case tc.want == 0:
				// The log is kept for a look, and the next Open says the same.
				if _, err := Open(path, Options{}); !errors.Is(err, ErrDamaged) {
					t.Fatalf("second open: %v, want ErrDamaged again", err)
				}
			case err != nil:
				t.Fatalf("open: %v", err)
			case got != tc.want:
				t.Fatalf("run ends at %d, want %d", got, tc.want)
			}
		})
	}
}

// TestLogReplaysSegmentsInOrder: a log of several segments, none checkpointed, is replayed in
// order into a database that holds none of it.
func TestLogReplaysSegmentsInOrder(t *testing.T) {
	asGiven(t)
	img, _, _, _, n := laggingImage(t, 41, 500, 4<<10)
	if len(img.segments) < 4 {
		t.Fatalf("%d segments, want several", len(img.segments))
	}
	_, got, err := reopened(t, img.write(t))
	must(t, err)
	if got != n {
		t.Fatalf("run ends at %d, want %d", got, n)
	}
}

// TestLogLargerThanMemory (docs/reliability.md A11): a log is replayed in bbolt commits of
// replayBytesMax bytes of records, so one far larger than the memory the process may use (here 64 MiB against a heap that stays under
// 24 MiB) replays whole.
func TestLogLargerThanMemory(t *testing.T) {
	asGiven(t)
	if testing.Short() {
		t.Skip("writes 128 MiB")
	}
	img, _, _, _, seq := laggingImage(t, 64, 1<<20, 16<<20)
	total := 0
	for _, b := range img.segments {
		total += len(b)
	}
	path := img.write(t)
	img = crashImage{}
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, peak := m.HeapAlloc, m.HeapAlloc
	records := 0
	testHookReplay = func(step string) {
		if step == "applied" {
			records++
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}
	t.Cleanup(func() { testHookReplay = func(string) {} })
	_, got, err := reopened(t, path)
	must(t, err)
	if got != seq || records != int(seq-1) {
		t.Fatalf("run ends at %d after %d records replayed, want %d after %d", got, records, seq, seq-1)
	}
	if grew := peak - base; grew > 24<<20 {
		t.Fatalf("replaying a %d MiB log grew the heap by %d MiB", total>>20, grew>>20)
	}
	t.Logf("replayed %d MiB; the heap grew by at most %.1f MiB", total>>20, float64(peak-base)/(1<<20))
}

// halfThenENOSPC writes half of b and fails as a full disk does.
func halfThenENOSPC(f *os.File, b []byte, at int64) (int, error) {
	n, _ := f.WriteAt(b[:len(b)/2], at)
	return n, syscall.ENOSPC
}

// TestLogAppendErrorIsFatal (docs/reliability.md A5, A11): an append that fails (a full disk,
// half the record written) fails its commit and stops the store as a failed bbolt commit does;
// the log is kept, and the next Open drops the torn record and ends at the last acknowledged
// commit.
func TestLogAppendErrorIsFatal(t *testing.T) {
	s, path, u, acked := fiveCommits(t)
	// b is the record, then zeros to the end of its page (wal.put): half of the record.
	s.log.failWrite = func(f *os.File, b []byte) (int, error) { return halfThenENOSPC(f, b[:s.log.rec], s.log.size) }
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("commit: %v, want ENOSPC", err)
	}
	s = failedThenReopened(t, s, path, u, syscall.ENOSPC)
	if r, err := s.Run("r1"); err != nil || r.LastSeq != acked {
		t.Fatalf("after restart the run is %+v (%v), want it at the last acknowledged %d", r, err, acked)
	}
	commitRun(t, s, u) // the failed commit, again
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}

// TestLogAppendFailingInItsPadding (docs/reliability.md A11): a record's write goes on in zeros
// to the end of its page (wal.put); one that fails there, the record whole, fails its commit
// and stops the store as any failed append does, and the next Open holds that commit, as it
// does after a failed sync of a whole record: the log has it.
func TestLogAppendFailingInItsPadding(t *testing.T) {
	s, path, u, acked := fiveCommits(t)
	padded := false
	s.log.failWrite = func(f *os.File, b []byte) (int, error) {
		rec := s.log.rec
		padded = len(b) > rec
		n, err := f.WriteAt(b[:rec+(len(b)-rec)/2], s.log.size)
		if err != nil {
			return n, err
		}
		return n, syscall.ENOSPC
	}
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("commit: %v, want ENOSPC", err)
	}
	if !padded {
		t.Fatalf("the record ends at its page's end: no padding to fail in")
	}
	s = failedThenReopened(t, s, path, u, syscall.ENOSPC)
	if r, err := s.Run("r1"); err != nil || r.LastSeq != acked+1 {
		t.Fatalf("after restart the run is %+v (%v), want it at %d, the failed commit's whole record replayed", r, err, acked+1)
	}
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}

// fiveCommits opens a store with the log at a new path and commits five events of run r1 in
// it, the last four with 300-byte payloads. u is r1's next commit, acked its last event's seq.
func fiveCommits(t *testing.T) (s *Store, path string, u history.RunUpdate, acked uint64) {
	t.Helper()
	asGiven(t)
	path = filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	u = storetest.Started("wf", "r1", t0)
	for range 5 {
		commitRun(t, s, u)
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(300)
	}
	return s, path, u, u.Run.LastSeq - 1
}

// failedThenReopened checks that a store failed with want refuses the commit after u and
// Close with it, and keeps its log segment; then it opens the database again.
func failedThenReopened(t *testing.T, s *Store, path string, u history.RunUpdate, want error) *Store {
	t.Helper()
	next := storetest.Next(u.Run, history.ActivityCompleted, 1)
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{next}}); !errors.Is(err, want) {
		t.Fatalf("commit after the failure: %v, want the failure", err)
	}
	if err := s.Close(); !errors.Is(err, want) {
		t.Fatalf("close: %v, want the failure", err)
	}
	if names, _ := segments(walDir(path)); len(names) != 1 {
		t.Fatalf("the log after the failure: %v, want its segment kept", names)
	}
	return openAt(t, path, Options{})
}

// TestLogCheckpoints (docs/reliability.md A12): with the log on, a full segment is checkpointed
// (bbolt's synced commit, then the segment removed), so the log holds about one segment;
// Close syncs bbolt and removes the log, and the file opens without it.
func TestLogCheckpoints(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{LogSegmentSize: 4 << 10})
	must(t, err)
	u := storetest.Started("wf", "r1", t0)
	for range 200 {
		commitRun(t, s, u)
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(300)
	}
	if s.checkpoints.Load() == 0 {
		t.Fatalf("no checkpoint ran")
	}
	if names, err := segments(walDir(path)); err != nil || len(names) != 1 {
		t.Fatalf("log after the checkpoints: %v %v, want the current segment alone", names, err)
	}
	must(t, s.Close())
	if _, err := os.Stat(walDir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close the log folder is still there (%v)", err)
	}
	s = openAt(t, path, Options{})
	if r, err := s.Run("r1"); err != nil || r.LastSeq != 200 {
		t.Fatalf("reopened without the log: %+v %v, want the run at seq 200", r, err)
	}
}
