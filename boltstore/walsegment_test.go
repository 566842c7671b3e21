package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// Tests of the log's filled segments (wal.go, walread.go; docs/reliability.md A13).

// segmentOf appends records 1..3 (payloads of 100, 200 and 300 bytes) to a fresh log of
// 64 KiB segments and returns the segment's bytes and the offsets its records start at and end.
func segmentOf(t *testing.T) (seg []byte, offs []int64) {
	t.Helper()
	l, err := openWAL(filepath.Join(t.TempDir(), "x.wal"), 1, 64<<10)
	must(t, err)
	for i := 1; i <= 3; i++ {
		offs = append(offs, l.size)
		_, err := l.append(bytes.Repeat([]byte{byte(i)}, 100*i))
		must(t, err)
	}
	offs = append(offs, l.size)
	seg, err = os.ReadFile(l.name)
	must(t, err)
	must(t, l.close())
	return seg, offs
}

// record is a whole, valid record.
func record(lsn uint64, payload []byte) []byte {
	b := make([]byte, walHeader, walHeader+len(payload))
	binary.BigEndian.PutUint32(b[0:], uint32(len(payload)))
	binary.BigEndian.PutUint64(b[8:], lsn)
	binary.BigEndian.PutUint32(b[4:], walSum(b[8:16], payload))
	return append(b, payload...)
}

// readSegments writes segs (by first LSN) to a fresh folder and reads them as the log.
func readSegments(t *testing.T, segs map[uint64][]byte) ([]uint64, error) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for first, b := range segs {
		name := segmentName(dir, first, int64(len(b)))
		must(t, os.WriteFile(name, b, 0o600))
		names = append(names, name)
	}
	slices.Sort(names)
	var got []uint64
	err := readLog(names, func(lsn uint64, _ []byte) error {
		got = append(got, lsn)
		return nil
	})
	return got, err
}

// TestLogSegmentsAreFilled: a segment has its size from its creation, its records followed
// by zeros; the spare segment is made ahead and becomes the next at the roll.
func TestLogSegmentsAreFilled(t *testing.T) {
	seg, offs := segmentOf(t)
	if len(seg) != 64<<10 {
		t.Fatalf("segment of %d bytes, want it preallocated to %d", len(seg), 64<<10)
	}
	if !bytes.Equal(seg[offs[3]:], make([]byte, len(seg)-int(offs[3]))) {
		t.Fatalf("bytes other than zeros after the records")
	}
	dir := filepath.Join(t.TempDir(), "x.wal")
	l, err := openWAL(dir, 1, 4<<10)
	must(t, err)
	defer l.close()
	for l.next < 40 {
		if !l.fits(300) {
			_, err := l.roll()
			must(t, err)
		}
		_, err := l.append(make([]byte, 300))
		must(t, err)
	}
	names, err := segments(dir)
	must(t, err)
	if len(names) < 3 {
		t.Fatalf("segments %v, want several", names)
	}
	for _, n := range names {
		if fi, err := os.Stat(n); err != nil || fi.Size() < 4<<10 {
			t.Fatalf("segment %s: %v %v, want at least 4 KiB", n, fi.Size(), err)
		}
	}
}

// TestLogZeroTailEndsTheLog: the zeros of a preallocated segment after its records are the log's
// end, not a record, not damage; likewise a record zeroed in part or whole, as a torn append leaves
// it.
func TestLogZeroTailEndsTheLog(t *testing.T) {
	seg, offs := segmentOf(t)
	for _, tc := range []struct {
		name string
		b    []byte
		want []uint64
	}{
		{"preallocated tail", seg, []uint64{1, 2, 3}},
		{"the last record zeroed", zeroFrom(seg, offs[2]), []uint64{1, 2}},
		{"the last record's payload half zeroed", zeroFrom(seg, offs[2]+walHeader+150), []uint64{1, 2}},
		{"the last record's header half written", zeroFrom(seg, offs[2]+6), []uint64{1, 2}},
		{"every record zeroed", zeroFrom(seg, 0), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSegments(t, map[uint64][]byte{1: tc.b})
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("read %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

func zeroFrom(seg []byte, at int64) []byte {
	b := bytes.Clone(seg)
	clear(b[at:])
	return b
}

// put returns seg with b written at offset at.
func put(seg []byte, at int64, b []byte) []byte {
	out := bytes.Clone(seg)
	copy(out[at:], b)
	return out
}

// TestLogStaleRecordAfterTheEndIsNotReplayed: a whole, valid record that is not the LSN due,
// where the records end or further in the zeros, is not replayed: a stale one (an LSN already
// read) is not the log; and one with a later LSN, which only damage before it explains, fails
// the read with ErrDamaged instead of being replayed.
func TestLogStaleRecordAfterTheEndIsNotReplayed(t *testing.T) {
	seg, offs := segmentOf(t)
	end := offs[3]
	for _, tc := range []struct {
		name    string
		b       []byte
		want    []uint64
		damaged bool
	}{
		{"a stale record where the records end", put(seg, end, record(2, []byte("old"))), []uint64{1, 2, 3}, false},
		{"a stale record in the zeros", put(seg, end+1000, record(1, []byte("old"))), []uint64{1, 2, 3}, false},
		{"a copy of the last record after it", put(seg, end, seg[offs[2]:end]), []uint64{1, 2, 3}, false},
		{"garbage where the records end", put(seg, end, bytes.Repeat([]byte{0xa5}, 100)), []uint64{1, 2, 3}, false},
		{"a later LSN where the records end", put(seg, end, record(9, []byte("new"))), nil, true},
		{"a later LSN in the zeros", put(seg, end+5000, record(5, []byte("new"))), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSegments(t, map[uint64][]byte{1: tc.b})
			if tc.damaged {
				if !errors.Is(err, ErrDamaged) || slices.ContainsFunc(got, func(l uint64) bool { return l > 3 }) {
					t.Fatalf("read %v %v, want ErrDamaged and nothing past record 3", got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("read %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

// TestLogValidRecordAfterDamagedOneIsReported (docs/reliability.md A13): a damaged record with a
// whole, valid record after it is damage in the middle of the log, reported with ErrDamaged and
// both offsets, never taken for the log's end: a flipped payload byte, a damaged length (where
// the next record starts is then unknown), a damaged LSN, a record zeroed whole; and across
// segments, a segment whose records stop short of where the next segment starts.
func TestLogValidRecordAfterDamagedOneIsReported(t *testing.T) {
	seg, offs := segmentOf(t)
	flip := func(at int64, mask byte) []byte {
		b := bytes.Clone(seg)
		b[at] ^= mask
		return b
	}
	zeroed := bytes.Clone(seg)
	clear(zeroed[offs[1]:offs[2]])
	for _, tc := range []struct {
		name string
		segs map[uint64][]byte
		upTo uint64 // the records read before the damage
	}{
		{"record 2's payload flipped", map[uint64][]byte{1: flip(offs[1]+walHeader+7, 1)}, 1},
		{"record 2's length grown", map[uint64][]byte{1: flip(offs[1]+2, 0x40)}, 1},
		{"record 2's length zeroed", map[uint64][]byte{1: put(seg, offs[1], make([]byte, 4))}, 1},
		{"record 2's LSN flipped", map[uint64][]byte{1: flip(offs[1]+15, 4)}, 1},
		{"record 2 zeroed", map[uint64][]byte{1: zeroed}, 1},
		{"a segment stops short of the next", map[uint64][]byte{1: zeroFrom(seg, offs[2]), 4: record(4, []byte("next"))}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSegments(t, tc.segs)
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("read %v %v, want ErrDamaged", got, err)
			}
			if slices.ContainsFunc(got, func(l uint64) bool { return l > tc.upTo }) {
				t.Fatalf("read %v before the damage was found, want records up to %d at most", got, tc.upTo)
			}
			t.Log(err)
		})
	}
}

// TestLogFillENOSPCAtRollLosesNothing (docs/reliability.md A5, A13): when the disk is full
// as the next segment is filled, the roll fails: the store stops as on a failed append,
// keeping the segment it appended to, intact, and the next Open holds every acknowledged commit.
func TestLogFillENOSPCAtRollLosesNothing(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{LogSegmentSize: 4 << 10})
	must(t, err)
	// The first spare starts once the first segment is half full, and fails.
	s.log.fill = func(*os.File, int64) error { return syscall.ENOSPC }
	ctx := context.Background()
	u := storetest.Started("wf", "r1", t0)
	var acked uint64
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatalf("100 commits and none failed")
		}
		err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}})
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "fill log segment") {
				t.Fatalf("commit: %v, want the filling's ENOSPC", err)
			}
			break
		}
		acked = u.Run.LastSeq
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(300)
	}
	if err := s.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("close: %v, want the failure", err)
	}
	if _, err := os.Stat(filepath.Join(walDir(path), spareName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a spare segment is left after Close: %v", err)
	}
	s = openAt(t, path, Options{})
	r, err := s.Run("r1")
	must(t, err)
	if r.LastSeq != acked {
		t.Fatalf("after restart the run ends at %d, want the last acknowledged %d", r.LastSeq, acked)
	}
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}

// TestLogSpareLeftByACrashIsRemoved: a spare segment a crash left holds no record; Open removes
// it, and a later Close leaves no log folder.
func TestLogSpareLeftByACrashIsRemoved(t *testing.T) {
	asGiven(t)
	img, _, _, _, seq := laggingImage(t, 5, 100, 64<<10)
	img.segments[spareName] = bytes.Repeat([]byte{0x5a}, 4096) // not even zeros
	path := img.write(t)
	s, got, err := reopened(t, path)
	must(t, err)
	if got != seq {
		t.Fatalf("run ends at %d, want %d", got, seq)
	}
	must(t, s.Close())
	if _, err := os.Stat(walDir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close the log folder is still there (%v)", err)
	}
}
