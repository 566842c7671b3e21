package boltstore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestRemapStall (docs/reliability.md A8): a commit that must grow bbolt's mmap waits for every
// open read transaction (boltdb#378, #392, #498; bbolt#854). While one read transaction is held
// open, as an export reading a long run in one View would, 50 MB of events are appended through
// Commit, once with the default InitialMmapSize and once with a small one, each commit timed. The
// held reader also keeps the pages commits free from being reused, so the file grows by more than
// the events meanwhile: the default reservation must cover both.
//
// Whether a commit waited for the reader is read from the goroutine stacks just before the
// reader ends: a commit that needs a remap cannot get past it while the reader is open. No
// latency is asserted (a loaded machine stalls commits for reasons of its own; the figures are
// printed): with the default reservation the file must end below it, so bbolt never had to
// remap at all. The hold is 3 s, 10 s under -tags soak (tier T3 of docs/reliability.md).
func TestRemapStall(t *testing.T) {
	hold := 3 * time.Second
	if soak {
		hold = 10 * time.Second
	}
	for _, c := range []struct {
		name string
		mmap int // 0: the default
	}{
		{"default", 0},
		{"small", 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := appendWhileReading(t, Options{InitialMmapSize: c.mmap}, hold)
			mmap := c.mmap
			if mmap == 0 {
				mmap = DefaultInitialMmapSize
			}
			fmt.Printf("RELIABILITY suite=boltstore-remap mmap=%dMiB reader_ms=%d commits=%d mb=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f stalled=%d held_commits=%d file_mb=%d\n",
				mmap>>20, f.reader.Milliseconds(), len(f.lat), remapBytes>>20, ms(f.quantile(0.5)), ms(f.quantile(0.99)),
				ms(f.max()), b2i(f.stalled), f.held, f.fileSize>>20)
			if c.mmap != 0 {
				// The detector's own check: with 1 MiB mapped, 50 MB of commits must remap while
				// the reader is open. If this sees no stall, "no stall" below proves nothing.
				if !f.stalled {
					t.Errorf("with InitialMmapSize %d no commit was seen waiting in bbolt's remap for the reader held %v", c.mmap, hold)
				}
				return
			}
			if f.stalled {
				t.Errorf("with the default InitialMmapSize a commit was waiting in bbolt's remap for the reader held %v", hold)
			}
			if f.fileSize >= int64(mmap) {
				t.Errorf("with the default InitialMmapSize (%d MiB) the file grew to %d bytes: commits had to remap", mmap>>20, f.fileSize)
			}
		})
	}
}

// TestRemapStall appends remapBytes of events: docs/reliability.md A8's 50 MB, in commits of
// remapPerCommit events of remapEventBytes (50 MB through the encoder takes about 7 s of CPU
// under -race; fewer, larger events keep the per-event cost down).
const (
	remapBytes      = 50 << 20
	remapEventBytes = 4000
	remapPerCommit  = 8
)

type remapFigures struct {
	lat      []time.Duration // each commit's, sorted
	reader   time.Duration   // how long the read transaction was open
	stalled  bool            // a commit was waiting in bbolt's remap when the reader ended
	held     int64           // commits done while the reader was open
	fileSize int64
}

func (f remapFigures) quantile(q float64) time.Duration {
	return f.lat[min(int(q*float64(len(f.lat))), len(f.lat)-1)]
}

func (f remapFigures) max() time.Duration { return f.lat[len(f.lat)-1] }

// appendWhileReading opens a store with opts, holds a read transaction open for hold through
// the store's read path, and meanwhile appends remapBytes of events to one run, timing each
// commit. Appending goes on after the reader ends if it is not done by then.
func appendWhileReading(t *testing.T, opts Options, hold time.Duration) remapFigures {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, opts)
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	// Committed, so the reader reads bbolt's file in a read transaction of its own, not the
	// writer's open one (which would hold the writer for the reader's whole time).
	must(t, s.settle())
	r := u.Run

	var f remapFigures
	var done atomic.Int64
	opened, closed := make(chan struct{}), make(chan error, 1)
	go func() {
		start := time.Now()
		err := s.view("export run r1", func(*bolt.Tx) error {
			close(opened)
			time.Sleep(hold)
			f.stalled, f.held = inRemap(), done.Load()
			return nil
		})
		f.reader = time.Since(start)
		closed <- err
	}()
	<-opened

	data := payload(remapEventBytes - 2)
	for n := 0; n < remapBytes; n += remapEventBytes * remapPerCommit {
		next := storetest.Next(r, history.ActivityCompleted, remapPerCommit)
		for i := range next.Events {
			next.Events[i].Data = data
		}
		start := time.Now()
		must(t, s.Commit(t.Context(), history.Commit{Runs: []history.RunUpdate{next}}))
		f.lat = append(f.lat, time.Since(start))
		done.Add(1)
		r = next.Run
	}
	must(t, <-closed)
	slices.Sort(f.lat)
	fi, err := os.Stat(path)
	must(t, err)
	f.fileSize = fi.Size()
	return f
}

// inRemap reports whether a commit is in bbolt's remap. Called while a read transaction is
// open, that commit is waiting for it: the remap takes the mmap lock every reader holds.
func inRemap() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		for _, g := range bytes.Split(buf[:n], []byte("\n\n")) {
			if bytes.Contains(g, []byte("go.etcd.io/bbolt.(*DB).mmap(")) && bytes.Contains(g, []byte("go.etcd.io/bbolt.(*Tx).Commit(")) {
				return true
			}
		}
		return false
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
