package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestLogRecyclesCheckpointedSegments: once a segment is checkpointed, the next spare is made
// from it, not filled anew; every acknowledged commit is there after Close and Open, and Close
// leaves no log folder.
func TestLogRecyclesCheckpointedSegments(t *testing.T) {
	asGiven(t)
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{LogSegmentSize: 64 << 10})
	must(t, err)
	var fills atomic.Int32
	fill := s.log.fill
	s.log.fill = func(f *os.File, size int64) error {
		fills.Add(1)
		return fill(f, size)
	}
	recycled := filepath.Join(walDir(path), recycledName)
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	seg, rolls := s.log.name, 0
	for rolls < 5 {
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(300)
		commitRun(t, s, u)
		if s.log.name == seg {
			continue
		}
		// Rolled: wait for the checkpoint to recycle the old segment, as it has long done by
		// the time a server's segment is half full and wants its spare.
		seg, rolls = s.log.name, rolls+1
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(recycled); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("roll %d: no recycled segment 30 s after it", rolls)
			}
		}
	}
	// The first spare is made before any checkpoint; every later one from a recycled segment.
	if filled, reused := fills.Load(), s.log.reused.Load(); filled != 1 || reused != int32(rolls-1) {
		t.Fatalf("spares over %d rolls: %d filled anew, %d recycled, want 1 and %d", rolls, filled, reused, rolls-1)
	}
	must(t, s.Close())
	if _, err := os.Stat(walDir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close the log folder is still there (%v)", err)
	}
	s = openAt(t, path, Options{})
	r, err := s.Run("r1")
	must(t, err)
	if r.LastSeq != u.Run.LastSeq {
		t.Fatalf("after reopening the run ends at %d, want %d", r.LastSeq, u.Run.LastSeq)
	}
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check: %q %v", ps, err)
	}
}

// TestLogRecycledSegmentReadsItsNewRecordsOnly: a recycled segment's old records after its new
// ones end the log, whole or cut by a torn append, and are never taken for damage.
func TestLogRecycledSegmentReadsItsNewRecordsOnly(t *testing.T) {
	old, _ := segmentOf(t) // records 1..3
	r10, r11 := record(10, make([]byte, 50)), record(11, []byte("eleven, longer than record 1 was"))
	fresh := put(put(old, 0, r10), int64(len(r10)), r11)
	end := int64(len(r10) + len(r11))
	for _, tc := range []struct {
		name string
		b    []byte
		want []uint64
	}{
		{"old records after the new", fresh, []uint64{10, 11}},
		{"a torn append over the old", put(fresh, end, record(12, make([]byte, 400))[:walHeader+100]), []uint64{10, 11}},
		{"nothing new yet", old, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSegments(t, map[uint64][]byte{10: tc.b})
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("read %v %v, want %v", got, err, tc.want)
			}
		})
	}
}
