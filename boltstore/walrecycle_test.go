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

// TestLogRecyclesCheckpointedSegments: once segments are checkpointed, the spares are made from
// them, not filled anew; every acknowledged commit is there after Close and Open, and Close
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
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	for range 600 {
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(300)
		commitRun(t, s, u)
		time.Sleep(time.Millisecond) // time for checkpoints, as between a server's steps
	}
	filled, reused := int(fills.Load()), int(s.log.reused.Load())
	t.Logf("spares: %d filled anew, %d made from recycled segments", filled, reused)
	if reused < 3 || reused < filled {
		t.Fatalf("spares: %d filled anew, %d recycled, want most recycled", filled, reused)
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
	}{
		{"old records after the new", fresh},
		{"a torn append over the old", put(fresh, end, record(12, make([]byte, 400))[:walHeader+100])},
		{"nothing new yet", old},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSegments(t, map[uint64][]byte{10: tc.b})
			want := []uint64{10, 11}
			if tc.name == "nothing new yet" {
				want = nil
			}
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("read %v %v, want %v", got, err, want)
			}
		})
	}
}
