package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// FuzzDecodeBatch: a log record's payload, whatever its bytes, decodes or fails with an error,
// never a panic or a huge allocation; what decodes encodes again to bytes that decode to the same.
func FuzzDecodeBatch(f *testing.F) {
	u := storetest.Next(storetest.Started("wf", "r1", t0).Run, history.ActivityCompleted, 2)
	p, err := prepare(history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{{ID: "t1", RunID: "r1"}}, DeleteTasks: []string{"t0"}})
	if err != nil {
		f.Fatal(err)
	}
	good := encodeBatch(nil, []*prepared{p, p})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := decodeBatch(b)
		if err != nil {
			return
		}
		again := encodeBatch(nil, ps)
		ps2, err := decodeBatch(again)
		if err != nil {
			t.Fatalf("%x decoded, its encoding %x does not: %v", b, again, err)
		}
		if third := encodeBatch(nil, ps2); !bytes.Equal(third, again) {
			t.Fatalf("encoding not stable: %x, then %x", again, third)
		}
	})
}

// FuzzSegmentReader: a segment, whatever its bytes, reads as records, from the LSN its name says
// on, one by one, until its end, or fails with an error wrapping ErrDamaged, never a panic.
func FuzzSegmentReader(f *testing.F) {
	dir := f.TempDir()
	l, err := openWAL(filepath.Join(dir, "seed.wal"), 1, 1<<20)
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range [][]byte{{1, 2, 3}, bytes.Repeat([]byte{7}, 300)} {
		if _, err := l.append(p); err != nil {
			f.Fatal(err)
		}
	}
	seg, err := os.ReadFile(l.name)
	if err != nil {
		f.Fatal(err)
	}
	end := l.size
	l.close()
	f.Add(seg[:end])
	f.Add(seg[:20])
	f.Add(seg[:end+40])                             // a preallocated tail
	f.Add(append(seg[:end:end], seg[:end]...))      // stale records after the end
	f.Add(append(seg[19:end:end], seg[:end+40]...)) // garbage, then the records
	f.Fuzz(func(t *testing.T, b []byte) {
		name := filepath.Join(t.TempDir(), "0000000000000001.log")
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
		want := uint64(1)
		err := readLog([]string{name}, func(lsn uint64, _ []byte) error {
			if lsn != want {
				t.Fatalf("record %d read where %d was due", lsn, want)
			}
			want++
			return nil
		})
		if err != nil && !errors.Is(err, ErrDamaged) {
			t.Fatalf("read: %v, want nil or ErrDamaged", err)
		}
	})
}

// FuzzSegmentName: a file name in the log folder (anyone who can write there chooses it) is a
// segment's name or not, never a panic; a name read as a segment's names that segment again,
// so two names never read as one segment, and the roll record never decodes as a batch.
func FuzzSegmentName(f *testing.F) {
	f.Add(filepath.Base(segmentName("", 1, 1<<20)))
	f.Add(filepath.Base(segmentName("", 1<<63, 32<<20)))
	f.Add("0000000000000001.log")
	f.Add("00000000000000000001-+5.log")
	f.Add("00000000000000000001-01.log")
	f.Add("-1.log")
	if _, err := decodeBatch(rollRecord); err == nil {
		f.Fatalf("the roll record decodes as a batch")
	}
	f.Fuzz(func(t *testing.T, name string) {
		first, size, ok := parseSegment(name)
		if !ok {
			return
		}
		again := fmt.Sprintf("%016x.log", first)
		if size >= 0 {
			again = filepath.Base(segmentName("", first, size))
		}
		if again != filepath.Base(name) {
			t.Fatalf("%q reads as segment %d of %d bytes, whose name is %q", name, first, size, again)
		}
		if size == 0 || size < -1 {
			t.Fatalf("%q reads as a segment of %d bytes", name, size)
		}
	})
}
