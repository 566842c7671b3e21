//go:build linux && !wend_portable

package boltstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestDroppedMappedPagesLeaveTheResidentSet: reading a history faults bbolt's mapped pages into
// the process's resident set; maybeDropMapped takes them out again, and the history still reads
// back byte for byte (the pages come back from the page cache).
func TestDroppedMappedPagesLeaveTheResidentSet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	writeHistory(t, s, 400, 2000)
	before, err := s.Events("r1", 0)
	must(t, err)
	touched := mappedRSS(t, path)
	if touched < 512<<10 {
		t.Fatalf("reading %d events of ~2 KB left %d bytes of the map resident; want the pages read", len(before), touched)
	}
	s.writeMu.Lock()
	s.droppedAt = s.txs.Load() - dropMappedEvery
	s.maybeDropMapped()
	s.writeMu.Unlock()
	if after := mappedRSS(t, path); after > touched/8 {
		t.Errorf("after the drop %d bytes of the map are resident, %d before; want almost none", after, touched)
	}
	again, err := s.Events("r1", 0)
	must(t, err)
	if len(again) != len(before) {
		t.Fatalf("read %d events after the drop, %d before", len(again), len(before))
	}
	for i := range before {
		if before[i].Seq != again[i].Seq || !bytes.Equal(before[i].Data, again[i].Data) {
			t.Fatalf("event %d differs after the drop", i)
		}
	}
}

// TestWriterDropsMappedPages: the writer drops them by itself every dropMappedEvery
// transactions.
func TestWriterDropsMappedPages(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "wend.db"), Options{})
	writeHistory(t, s, dropMappedEvery, 0)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.droppedAt == 0 || s.droppedAt > s.txs.Load() {
		t.Errorf("after %d transactions the last drop is at %d; want one", s.txs.Load(), s.droppedAt)
	}
}

// writeHistory commits run r1's start and then n events, one commit each, event i carrying a
// payload of about size+i bytes (none when size is 0).
func writeHistory(t *testing.T, s *Store, n, size int) {
	t.Helper()
	u := storetest.Started("wf", "r1", t0)
	commitRun(t, s, u)
	r := u.Run
	for i := range n {
		next := storetest.Next(r, history.ActivityCompleted, 1)
		if size > 0 {
			next.Events[0].Data = payload(size + i)
		}
		commitRun(t, s, next)
		r = next.Run
	}
}

// mappedRSS is the resident size of this process's mappings of the file at path, from
// /proc/self/smaps.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	must(t, err)
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[5] == path
			continue
		}
		if in && len(fields) == 3 && fields[0] == "Rss:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			must(t, err)
			total += kb << 10
		}
	}
	must(t, sc.Err())
	return total
}

// TestReadsDropMappedPages: reading histories drops the pages they mapped in every
// dropMappedEveryRead bytes, as a start's repair that reads every open run would otherwise
// leave the whole file resident.
func TestReadsDropMappedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	writeHistory(t, s, 400, 2000)
	readDrops(t, 1<<40, 0) // never
	_, err := s.Events("r1", 0)
	must(t, err)
	kept := mappedRSS(t, path)
	if kept < 512<<10 {
		t.Fatalf("reading ~800 KB of events left %d bytes resident; want the pages read", kept)
	}
	s.dropMapped()
	dropMappedEveryRead = 1 // a look after every chunk, and a drop at each
	evs, err := s.Events("r1", 0)
	must(t, err)
	if len(evs) != 401 {
		t.Fatalf("read %d events, want 401", len(evs))
	}
	if after := mappedRSS(t, path); after > kept/8 {
		t.Errorf("after a read that drops, %d bytes of the map are resident (%d without drops)", after, kept)
	}
}

// TestOpenLeavesNoPagesResident: Open walks every page (bbolt rebuilds its free list from them),
// and a database of 100,000 waiting runs was then 480 MB resident before any run was read.
func TestOpenLeavesNoPagesResident(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	writeHistory(t, s, 400, 2000)
	must(t, s.Close())
	s = openAt(t, path, Options{})
	if got := mappedRSS(t, path); got > 256<<10 {
		t.Errorf("after Open %d bytes of the map are resident; want almost none", got)
	}
	evs, err := s.Events("r1", 0)
	must(t, err)
	if len(evs) != 401 {
		t.Fatalf("read %d events, want 401", len(evs))
	}
}

// TestScansDropMappedPages: reads of many records charge what they map in too, not only history
// reads. Resume's scan of the open runs (Runs reads each run's last event, in its own events
// bucket, and the kernel maps the pages around each faulted one in with it) left most of the
// file of 100,000 waiting runs resident in wend serve, and the scan of their tasks more. A
// scan drops the map once, at its end: dropping it every 16 MB charged as it went doubled the
// CPU of that start.
func TestScansDropMappedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	must(t, err)
	const runs, perCommit = 3000, 50
	for i := 0; i < runs; i += perCommit {
		var c history.Commit
		for j := i; j < i+perCommit; j++ {
			id := "r" + strconv.Itoa(j)
			u := storetest.Started("wf"+strconv.Itoa(j), id, t0)
			// A history past a quarter page: its events bucket is not inline in its parent.
			next := storetest.Next(u.Run, history.ActivityCompleted, 1)
			u.Run, u.Events = next.Run, append(u.Events, next.Events...)
			u.Events[1].Data = payload(1500)
			c.Runs = append(c.Runs, u)
			c.PutTasks = append(c.PutTasks, history.Task{ID: "t" + id, RunID: id, Kind: history.TaskTimer,
				AvailableAt: t0, Data: payload(500)})
		}
		must(t, s.Commit(context.Background(), c))
	}
	must(t, s.Close())
	s = openAt(t, path, Options{})
	readDrops(t, 1<<20, 0)
	const bound = 4 << 20 // the 1 MB charged between drops, and what the drop's own reads map
	drops := 0
	testHookReadDrop = func() { drops++ }
	t.Cleanup(func() { testHookReadDrop = func() {} })
	for _, tc := range []struct {
		name      string
		read      func() (int, error)
		mostDrops int // -1: no bound (a read per record, or Check's own drop)
	}{
		{"Runs", func() (int, error) {
			rs, err := s.Runs(history.RunFilter{Status: history.StatusRunning})
			return len(rs), err
		}, 1},
		{"Tasks", func() (int, error) { ts, err := s.Tasks(); return len(ts), err }, 1},
		{"Run of each", func() (int, error) {
			for i := range runs {
				if _, err := s.Run("r" + strconv.Itoa(i)); err != nil {
					return i, err
				}
			}
			return runs, nil
		}, -1},
		{"Check", func() (int, error) {
			problems, err := s.Check() // walks every page of the file
			if len(problems) > 0 {
				return 0, fmt.Errorf("check: %v", problems)
			}
			return runs, err
		}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.dropMapped()
			drops = 0
			n, err := tc.read()
			if tc.mostDrops >= 0 && drops > tc.mostDrops {
				t.Errorf("the scan dropped the map %d times; want at most %d, at its end", drops, tc.mostDrops)
			}
			must(t, err)
			if n != runs {
				t.Fatalf("read %d records, want %d", n, runs)
			}
			if got := mappedRSS(t, path); got > bound {
				t.Errorf("after the read %d bytes of the map are resident; want at most %d", got, bound)
			}
		})
	}
}

// readDrops sets, for the test, how much reads charge between two looks at the resident set
// and the budget past which a look drops the map.
func readDrops(t *testing.T, every, budget int64) {
	t.Helper()
	oldEvery, oldBudget := dropMappedEveryRead, mappedBudget
	t.Cleanup(func() { dropMappedEveryRead, mappedBudget = oldEvery, oldBudget })
	dropMappedEveryRead, mappedBudget = every, budget
}

// TestReadsUnderTheBudgetKeepTheMap: a look at the resident set drops the map only past
// mappedBudget. Dropping at every look, the 100,000 timers' firing refaulted the pages its runs
// in flight were reading and writing, and took seconds more CPU (docs/performance.md).
func TestReadsUnderTheBudgetKeepTheMap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	writeHistory(t, s, 400, 2000)
	s.dropMapped()
	readDrops(t, 1, 1<<40) // a look after every chunk, never past the budget
	evs, err := s.Events("r1", 0)
	must(t, err)
	if len(evs) != 401 {
		t.Fatalf("read %d events, want 401", len(evs))
	}
	if kept := mappedRSS(t, path); kept < 512<<10 {
		t.Errorf("after reading ~800 KB of events under the budget %d bytes of the map are resident; want the pages read kept", kept)
	}
	if rss := fileBackedRSS(); rss <= 0 {
		t.Errorf("file-backed resident set %d; want it read from /proc/self/statm", rss)
	}
}
