package boltstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Tests of the log's zero-filled segments and its spare (walfill.go, wal.go).

// TestLogSegmentSizes: an Open's first segment is filled to firstSegmentSize (the segment size
// when that is smaller), no spare exists until it is half full, and the segments after it have
// the full segment size, zeros after their records.
func TestLogSegmentSizes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		segmentSize  int64
		first, later int64
	}{
		{"default", DefaultLogSegmentSize, firstSegmentSize, DefaultLogSegmentSize},
		{"smaller than the first's cap", 64 << 10, 64 << 10, 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x.wal")
			l, err := openWAL(dir, 1, tc.segmentSize)
			must(t, err)
			defer l.close()
			if l.limit != tc.first || fileSize(t, l.name) != tc.first {
				t.Fatalf("first segment filled to %d (file %d bytes), want %d", l.limit, fileSize(t, l.name), tc.first)
			}
			rec := make([]byte, 4000)
			for l.size+walHeader+int64(len(rec)) < tc.first/2 {
				_, err := l.append(rec)
				must(t, err)
			}
			if l.spare != nil {
				t.Fatalf("a spare started at %d bytes of a %d-byte segment, want none before half", l.size, tc.first)
			}
			if _, err := os.Stat(filepath.Join(dir, spareName)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a spare file exists before the segment is half full (%v)", err)
			}
			for l.fits(len(rec)) {
				_, err := l.append(rec)
				must(t, err)
			}
			if l.spare == nil {
				t.Fatalf("no spare started when the segment had no room for the next record")
			}
			_, err = l.roll()
			must(t, err)
			if l.limit != tc.later || fileSize(t, l.name) != tc.later {
				t.Fatalf("the next segment filled to %d (file %d bytes), want %d", l.limit, fileSize(t, l.name), tc.later)
			}
			_, err = l.append([]byte("after the roll"))
			must(t, err)
			seg, err := os.ReadFile(l.name)
			must(t, err)
			if bytes.ContainsFunc(seg[l.size:], func(r rune) bool { return r != 0 }) {
				t.Fatalf("bytes other than zeros after the records of the rolled-to segment")
			}
		})
	}
}

// TestLogCloseStopsTheSparesFilling: Close while the spare is being filled stops the filling
// between chunks and removes the spare, instead of writing the rest of the segment first.
func TestLogCloseStopsTheSparesFilling(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x.wal")
	l, err := openWAL(dir, 1, 8*fillChunk)
	must(t, err)
	started, release := make(chan struct{}), make(chan struct{})
	chunks := 0
	l.fill = func(f *os.File, size int64) error {
		close(started)
		<-release
		err := l.zeroFill(f, size)
		fi, _ := f.Stat()
		chunks = int(fi.Size() / fillChunk)
		return err
	}
	rec := make([]byte, 64<<10)
	for l.spare == nil {
		_, err := l.append(rec)
		must(t, err)
	}
	<-started
	closed := make(chan error, 1)
	go func() { closed <- l.close() }()
	for !l.closing.Load() {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	if chunks != 0 {
		t.Fatalf("the spare's filling wrote %d chunks after Close, want it stopped before the first", chunks)
	}
	if _, err := os.Stat(filepath.Join(dir, spareName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a spare is left after Close (%v)", err)
	}
}
