package boltstore

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// Tests of finding a damaged log (walcheck.go; docs/reliability.md A15).

// runningImage commits run r1's start and then one-event commits of size-byte payloads to a
// store with the log on, in segments of 16 KiB, checkpointing as a server does (at each roll),
// until stop says so; it returns what a kill -9 then leaves (the database as of its last
// checkpoint, every file of the log folder) and the seq of the last commit acknowledged.
func runningImage(t *testing.T, hold bool, stop func(s *Store, rolls int) bool) (crashImage, uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{LogSegmentSize: 16 << 10})
	must(t, err)
	defer s.Close()
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	must(t, s.settle())
	s.holdCheckpoints = hold
	seg, rolls := s.log.name, 0
	for !stop(s, rolls) {
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(500)
		commitRun(t, s, u)
		if s.log.name != seg {
			seg, rolls = s.log.name, rolls+1
		}
	}
	// The writer holds writeMu through a batch and the checkpoint after it: the files are
	// read between two batches, as a kill finds them.
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	db, err := os.ReadFile(path)
	must(t, err)
	logs, err := readLogFolder(walDir(path))
	must(t, err)
	return crashImage{db: db, segments: logs}, u.Run.LastSeq
}

// segmentFiles lists the image's segments in LSN order.
func (c crashImage) segmentFiles(t *testing.T) []string {
	t.Helper()
	var names []string
	for n := range c.segments {
		if _, _, ok := parseSegment(n); ok {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Fatalf("the image holds no segment")
	}
	slices.SortFunc(names, bySegmentLSN)
	return names
}

// TestLogDamagedSegmentsAreRefused (docs/reliability.md A15): after a kill, a log whose newest
// segment is deleted, cut to zero or cut to half, whose middle segment is deleted, or whose
// newest segment is deleted right after a roll (checkpointed or not yet) fails Open, for
// writing and for reading, with ErrLogDamaged naming the damage and the way on; the log is kept
// and the next Open says the same. WEND_ACCEPT_LOG_LOSS then opens it with the records before
// the damage, and Check reports what was lost until it is acknowledged.
func TestLogDamagedSegmentsAreRefused(t *testing.T) {
	asGiven(t)
	// A server's log: checkpointed at each roll, the newest segment holding what came after.
	served, servedSeq := runningImage(t, false, func(s *Store, rolls int) bool { return rolls == 3 && s.log.size > 12<<10 })
	// Killed right after a roll: the newest segment holds the record that started it (in the
	// roll's checkpoint) and one more.
	rolled, rolledSeq := runningImage(t, false, func(s *Store, rolls int) bool { return rolls == 3 && s.log.next == s.log.first+2 })
	// No checkpoint since the log started: several segments, each closed with a roll record.
	lagging, laggingSeq := runningImage(t, true, func(s *Store, rolls int) bool { return rolls == 4 && s.log.size > 4<<10 })

	remove := func(i int) func(t *testing.T, c crashImage) {
		return func(t *testing.T, c crashImage) {
			names := c.segmentFiles(t)
			delete(c.segments, names[(i+len(names))%len(names)])
		}
	}
	cut := func(to func(n int) int) func(t *testing.T, c crashImage) {
		return func(t *testing.T, c crashImage) {
			names := c.segmentFiles(t)
			b := c.segments[names[len(names)-1]]
			c.segments[names[len(names)-1]] = b[:to(len(b))]
		}
	}
	for _, tc := range []struct {
		name   string
		img    crashImage
		acked  uint64
		damage func(t *testing.T, c crashImage)
		want   string
		keeps  bool // accepted, the damage loses no acknowledged commit (the records are all there)
	}{
		{"newest deleted", served, servedSeq, remove(-1), "which the last checkpoint was appending to, is missing", false},
		{"newest cut to zero", served, servedSeq, cut(func(int) int { return 0 }), "is 0 bytes, its name says 16384", false},
		{"newest cut to half", served, servedSeq, cut(func(n int) int { return n / 2 }), "is 8192 bytes, its name says 16384", false},
		{"newest deleted right after a roll", rolled, rolledSeq, remove(-1), "which the last checkpoint was appending to, is missing", false},
		{"newest deleted before the roll's checkpoint", lagging, laggingSeq, remove(-1), "ends with a roll to the segment starting at record", false},
		{"middle deleted", lagging, laggingSeq, remove(2), "a segment between them is missing", false},
		{"newest grown by a byte", served, servedSeq, func(t *testing.T, c crashImage) {
			names := c.segmentFiles(t)
			c.segments[names[len(names)-1]] = append(c.segments[names[len(names)-1]], 0)
		}, "is 16385 bytes, its name says 16384", true},
		{"newest renamed to claim half its size", served, servedSeq, func(t *testing.T, c crashImage) {
			names := c.segmentFiles(t)
			newest := names[len(names)-1]
			first, _, _ := parseSegment(newest)
			c.segments[filepath.Base(segmentName("", first, 8192))] = c.segments[newest]
			delete(c.segments, newest)
		}, "is 16384 bytes, its name says 8192", true},
		{"a planted segment after the newest", served, servedSeq, func(t *testing.T, c crashImage) {
			names := c.segmentFiles(t)
			first, _, _ := parseSegment(names[len(names)-1])
			c.segments[filepath.Base(segmentName("", first+1000, 4096))] = make([]byte, 4096)
		}, "a segment between them is missing", true},
		{"every segment deleted", lagging, laggingSeq, func(t *testing.T, c crashImage) {
			for _, n := range c.segmentFiles(t) {
				delete(c.segments, n)
			}
		}, "which the last checkpoint was appending to, is missing", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crashImage{db: tc.img.db, segments: map[string][]byte{}}
			for k, v := range tc.img.segments {
				c.segments[k] = v
			}
			_, intact, err := reopened(t, c.write(t))
			must(t, err)
			if intact != tc.acked {
				t.Fatalf("the intact image ends at seq %d, want the acknowledged %d", intact, tc.acked)
			}
			tc.damage(t, c)
			path := c.write(t)
			for _, opts := range []Options{{}, {ReadOnly: true}, {}} {
				_, err = Open(path, opts)
				if !errors.Is(err, ErrLogDamaged) || !errors.Is(err, ErrDamaged) {
					t.Fatalf("Open(%+v) of the damaged log: %v, want ErrLogDamaged", opts, err)
				}
				for _, w := range []string{tc.want, walDir(path), "was not closed cleanly", "may be lost", "WEND_ACCEPT_LOG_LOSS=1"} {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("the error does not say %q: %v", w, err)
					}
				}
			}
			t.Log(err)

			// Accepted, from a reading command: it opens for writing to record the loss.
			s, err := Open(path, Options{ReadOnly: true, AcceptLogLoss: true})
			must(t, err)
			r, err := s.Run("r1")
			must(t, err)
			if r.LastSeq > tc.acked {
				t.Errorf("the run ends at %d, past the acknowledged %d", r.LastSeq, tc.acked)
			}
			if kept := r.LastSeq == tc.acked; kept != tc.keeps {
				t.Errorf("accepted, the run ends at %d of the acknowledged %d; want every commit kept: %v", r.LastSeq, tc.acked, tc.keeps)
			}
			problems, err := s.Check()
			must(t, err)
			if len(problems) != 1 || !strings.Contains(problems[0], "behind what was acknowledged") ||
				!strings.Contains(problems[0], "was damaged") || !strings.Contains(problems[0], tc.want) {
				t.Fatalf("Check after the accepted loss = %q, want one problem naming the damage", problems)
			}
			must(t, s.Close())
			// It goes on: a plain Open, commits after the loss, and Check still reports it.
			s = openAt(t, path, Options{})
			u := storetest.Next(r, history.ActivityCompleted, 1)
			commitRun(t, s, u)
			problems, err = s.Check()
			must(t, err)
			if len(problems) != 1 || !strings.Contains(problems[0], "behind what was acknowledged") {
				t.Fatalf("Check after the accepted loss and a commit = %q, want the loss reported", problems)
			}
			must(t, s.Close())
		})
	}
}

// TestLogLeftoversOfARemovedLogAreNotDamage: a segment left of a log whose removal a crash cut
// (removals reach the disk in any order), whose roll record names a segment already removed,
// opens: bbolt holds every record of it, and the database no tail (walcheck.go).
func TestLogLeftoversOfARemovedLogAreNotDamage(t *testing.T) {
	asGiven(t)
	img, seq := runningImage(t, true, func(s *Store, rolls int) bool { return rolls == 2 })
	first := img.segmentFiles(t)[0]
	path := img.write(t)
	s, got, err := reopened(t, path)
	must(t, err)
	must(t, s.Close())
	if got != seq {
		t.Fatalf("the run ends at %d, want %d", got, seq)
	}
	must(t, os.Mkdir(walDir(path), 0o700))
	must(t, os.WriteFile(filepath.Join(walDir(path), first), img.segments[first], 0o600))
	for _, opts := range []Options{{ReadOnly: true}, {}} {
		s, err := Open(path, opts)
		if err != nil {
			t.Fatalf("Open(%+v) with a leftover segment: %v", opts, err)
		}
		if ps, err := s.Check(); err != nil || len(ps) > 0 {
			t.Fatalf("check: %q %v", ps, err)
		}
		must(t, s.Close())
	}
	if _, err := os.Stat(walDir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the leftover log is still there after a writer's Open and Close (%v)", err)
	}
}

// TestLogSegmentKeepsItsSize: every segment is the size its name gives, while the store runs
// and after a crash: a record that does not fit starts the next segment, one larger than a
// whole segment gets a segment of its own, and a recycled one is cut back to the segment size;
// the image a kill leaves replays whole.
func TestLogSegmentKeepsItsSize(t *testing.T) {
	asGiven(t)
	for _, hold := range []bool{true, false} {
		t.Run(map[bool]string{true: "no checkpoint", false: "checkpoints and recycling"}[hold], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wend.db")
			s, err := Open(path, Options{LogSegmentSize: 16 << 10})
			must(t, err)
			defer s.Close()
			u := storetest.Started("wf", "r1", t0)
			commitRun(t, s, u)
			must(t, s.settle())
			s.holdCheckpoints = hold
			large := 0
			sizes := []int{500, 3000, 40 << 10, 700, 9000, 100 << 10, 10, 12000, 5000, 5000, 5000, 7000, 30 << 10, 6000, 6000, 6000}
			for _, n := range sizes {
				u = storetest.Next(u.Run, history.ActivityCompleted, 1)
				u.Events[0].Data = payload(n)
				commitRun(t, s, u)
				s.writeMu.Lock()
				names, err := segments(walDir(path))
				s.writeMu.Unlock()
				must(t, err)
				for _, n := range names {
					_, size, _ := parseSegment(n)
					if got := fileSize(t, n); got != size {
						t.Fatalf("segment %s is %d bytes, its name says %d", filepath.Base(n), got, size)
					}
					if size != 16<<10 && size != firstSegmentSize {
						large++
					}
				}
				if _, size, _ := parseSegment(s.log.name); size == 16<<10 && s.log.limit != size {
					t.Fatalf("appending to %s with a limit of %d", s.log.name, s.log.limit)
				}
			}
			if large == 0 {
				t.Fatalf("no segment made for a record larger than the segment size")
			}
			if !hold && s.log.reused.Load() == 0 {
				t.Fatalf("no spare made from a recycled segment")
			}
			s.writeMu.Lock()
			db, err := os.ReadFile(path)
			must(t, err)
			logs, err := readLogFolder(walDir(path))
			must(t, err)
			s.writeMu.Unlock()
			_, got, err := reopened(t, crashImage{db: db, segments: logs}.write(t))
			must(t, err)
			if got != u.Run.LastSeq {
				t.Fatalf("after the crash the run ends at %d, want %d", got, u.Run.LastSeq)
			}
		})
	}
}

// TestLogOfAnOlderWendReplays: the log a kill left of a store written by wend before segments
// were named by their size ("%016x.log", the last record of a segment running past its
// filling, no roll records, no log_tail) replays whole; the new log is named by size.
// testdata/crash-unsized-segments.tar.gz holds that image, made by that wend: run r1 started,
// then 150 one-event commits in 64 KiB segments with no checkpoint after the start.
func TestLogOfAnOlderWendReplays(t *testing.T) {
	asGiven(t)
	dir := t.TempDir()
	untar(t, "testdata/crash-unsized-segments.tar.gz", dir)
	path := filepath.Join(dir, "wend.db")
	old, err := segments(walDir(path))
	must(t, err)
	if len(old) < 2 {
		t.Fatalf("the image holds segments %v, want several", old)
	}
	for _, n := range old {
		if _, size, _ := parseSegment(n); size != -1 {
			t.Fatalf("segment %s is named by its size, want the older names", n)
		}
	}
	s, got, err := reopened(t, path)
	must(t, err)
	if got != 151 {
		t.Fatalf("the run ends at %d, want 151", got)
	}
	u := storetest.Next(history.Run{RunID: "r1", WorkflowID: "wf", LastSeq: got}, history.ActivityCompleted, 1)
	commitRun(t, s, u)
	names, err := segments(walDir(path))
	must(t, err)
	if len(names) != 1 {
		t.Fatalf("segments after the replay: %v, want the new one alone", names)
	}
	if _, size, _ := parseSegment(names[0]); size != fileSize(t, names[0]) {
		t.Fatalf("the new segment %s is not named by its size", names[0])
	}
	must(t, s.Close())
}

// untar unpacks the gzipped tar archive at name into dir.
func untar(t *testing.T, name, dir string) {
	t.Helper()
	f, err := os.Open(name)
	must(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	must(t, err)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		must(t, err)
		to := filepath.Join(dir, filepath.Clean(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			must(t, os.MkdirAll(to, 0o700))
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			must(t, err)
			must(t, os.MkdirAll(filepath.Dir(to), 0o700))
			must(t, os.WriteFile(to, b, 0o600))
		}
	}
}
