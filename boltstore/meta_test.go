package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// bbolt's page header is 16 bytes; the meta follows: magic, version, page size, flags (4 bytes
// each), root bucket (16), freelist pgid, high-water pgid, txid, checksum (8 each).
const (
	metaOffset   = 16
	metaPageSize = metaOffset + 8
	metaTxid     = metaOffset + 48
	metaEnd      = metaOffset + 64
)

// TestTornMeta (docs/reliability.md A2): with bytes of the newest meta page damaged (a torn or lost
// last write), bbolt opens from the previous meta page: at most the last commit is lost (none
// after a Close with the log, which leaves both meta pages holding every commit), and what
// remains checks clean and takes new commits.
func TestTornMeta(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	// A small mmap keeps the file (and its 23 copies) small: bbolt preallocates 16 MiB beyond
	// a larger mmap.
	small := Options{InitialMmapSize: 1 << 20}
	s, err := Open(src, small)
	must(t, err)
	const commits = 40
	u := storetest.Started("wf", "r1", t0)
	for range commits {
		must(t, s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}))
		u = storetest.Next(u.Run, history.ActivityCompleted, 1)
	}
	must(t, s.Close())
	orig, err := os.ReadFile(src)
	must(t, err)
	pageSize := int(binary.LittleEndian.Uint32(orig[metaPageSize:]))
	newest := 0
	if txid(orig, 1, pageSize) > txid(orig, 0, pageSize) {
		newest = 1
	}
	previous := txid(orig, 1-newest, pageSize)

	// A trial per third meta byte (every field is hit), and one with the page zeroed (-1: a
	// lost write).
	offsets := []int{-1}
	for off := metaOffset; off < metaEnd; off += 3 {
		offsets = append(offsets, off)
	}
	trials, fallbacks, maxLost, checkErrors := 0, 0, 0, 0
	for _, off := range offsets {
		b := append([]byte(nil), orig...)
		page := b[newest*pageSize : (newest+1)*pageSize]
		if off < 0 {
			clear(page)
		} else {
			page[off] ^= 0xff
		}
		path := filepath.Join(dir, fmt.Sprintf("torn-%d.db", off))
		must(t, os.WriteFile(path, b, 0o600))
		trials++
		lost, nerr, fellBack := reopenTorn(t, path, off, small, previous)
		maxLost, checkErrors = max(maxLost, lost), checkErrors+nerr
		if fellBack {
			fallbacks++
		}
	}
	fmt.Printf("RELIABILITY suite=boltstore-meta trials=%d fallbacks=%d max_lost_commits=%d check_errors=%d\n",
		trials, fallbacks, maxLost, checkErrors)
	if fallbacks != trials || maxLost > 1 || checkErrors > 0 {
		t.Fatalf("fallbacks %d of %d, max lost %d, check errors %d", fallbacks, trials, maxLost, checkErrors)
	}
}

func txid(b []byte, page, pageSize int) uint64 {
	return binary.LittleEndian.Uint64(b[page*pageSize+metaTxid:])
}

// reopenTorn opens a damaged copy and reports how many commits it lost, how many check
// problems it has, and whether it opened at the previous transaction.
func reopenTorn(t *testing.T, path string, off int, opts Options, previous uint64) (lost, problems int, fellBack bool) {
	t.Helper()
	// Without the log: an Open with it writes the log's id (logid.go), a transaction past the
	// one it opened at, which this test reads.
	opts.NoLog = true
	s, err := Open(path, opts)
	if err != nil {
		t.Errorf("byte %d: open: %v", off, err)
		return 0, 0, false
	}
	defer s.Close()
	at, err := s.db.Begin(false)
	must(t, err)
	fellBack = uint64(at.ID()) == previous
	must(t, at.Rollback())
	r, err := s.Run("r1")
	if err != nil {
		t.Errorf("byte %d: %v", off, err)
		return 0, 0, false
	}
	lost = 40 - int(r.LastSeq)
	evs, err := s.Events("r1", 0)
	if err != nil {
		t.Errorf("byte %d: %v", off, err)
		problems++
	}
	// Resume as the engine would: the next commit rewrites the damaged meta page, which
	// tx.Check would otherwise still (rightly) report when its page header was hit.
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{storetest.Next(r, history.TimerFired, 1)}}); err != nil {
		t.Errorf("byte %d: commit after fallback: %v", off, err)
		problems++
	}
	ps, err := s.Check()
	must(t, err)
	for _, p := range ps {
		t.Errorf("byte %d: %s", off, p)
	}
	problems += len(ps)
	return lost, problems, fellBack && int(lost)+len(evs) == 40
}
