package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// The write-ahead log (on unless Options.NoLog): with it, a commit's durable write is one synced append to
// a log file beside the database, and bbolt's transaction is committed (synced by bbolt) only at
// checkpoints (checkpoint.go). docs/design.md says why and docs/reliability.md what it guarantees.
//
// The log is a folder, PATH.wal, of segment files named by the log sequence number (LSN) of
// their first record, 16 hex digits, ".log". A record is
//
//	length uint32 | CRC-32C(lsn | payload) uint32 | lsn uint64 | payload (length bytes)
//
// all big-endian; the payload is a batch of commits (walbatch.go). Records are appended in LSN
// order, one per bbolt transaction, and each is fdatasynced before its commits are answered.
// bbolt's meta bucket keeps the LSN of the last record applied (keyLogLSN), written in the same
// transaction as the record's commits, so recovery knows where to start: the record after it.
//
// A segment is filled with zeros, written and synced, before its first record (walfill.go), so
// an append overwrites blocks that are allocated and written: its fdatasync changes neither the
// file's size nor its block map, and carries no metadata of its own (docs/design.md, "The log's
// files"). The records end at the first one that is not whole, valid and the LSN expected
// (walread.go); zeros follow them. The next segment is made ahead, in the background, as the
// spare file (spareName), renamed at the roll.

// walHeader is the bytes of a record before its payload.
const walHeader = 16

// DefaultLogSegmentSize is the size past which the log starts a new segment and checkpoints the
// old ones: bbolt synced, then they are removed. It bounds the log replayed at Open, and each
// segment file (and the spare) is filled to it, but the first of an Open (firstSegmentSize).
const DefaultLogSegmentSize = 32 << 20

// firstSegmentSize caps the segment an Open starts, which Open waits for: filling a whole
// segment would add tens of milliseconds to every Open. The spare after it has the full size.
const firstSegmentSize = 1 << 20

// keyLogLSN, in the meta bucket, is the LSN of the last log record bbolt holds.
var keyLogLSN = []byte("log_lsn")

// wal is the log's write side. Only the writer (loop or an inline caller, never both) appends
// and rolls, and its checkpoints remove the segments it closed.
type wal struct {
	dir         string
	f           *os.File // the segment appended to
	name        string   // its path
	size        int64    // the end of its last whole record; zeros follow, to the filled end
	limit       int64    // the segment's filled size: the log rolls once size reaches it
	next        uint64   // the LSN of the next record
	segmentSize int64
	buf         []byte
	spare       chan spareFile // the next segment, being made in the background; nil when none
	closing     atomic.Bool    // set by close: a spare being filled stops
	reused      atomic.Int32   // spares made from a recycled segment (walrecycle.go), for tests

	// fill fills a new segment (zeroFill); tests replace it (ENOSPC) before the first spare,
	// which starts once the first segment is half full.
	fill func(f *os.File, size int64) error
	// failWrite, set by tests, replaces the write of a record's bytes (ENOSPC half-way).
	failWrite func(f *os.File, b []byte) (int, error)
	// failSync, set by tests, replaces the fdatasync of a record.
	failSync func(f *os.File) error
}

func walDir(dbPath string) string { return dbPath + ".wal" }

func segmentName(dir string, first uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016x.log", first))
}

// segments lists the log's segment files in LSN order; none when the folder does not exist.
func segments(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read log folder: %w", err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if hex, ok := strings.CutSuffix(n, ".log"); ok && len(hex) == 16 {
			if _, err := strconv.ParseUint(hex, 16, 64); err == nil {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	slices.Sort(out) // fixed-width hex: name order is LSN order
	return out, nil
}

// spareName is the next segment, made ahead of the roll that renames it (prepareSpare).
const spareName = "next.spare"

// spareFile is a spare made in the background, or the error that stopped it.
type spareFile struct {
	f   *os.File
	err error
}

// openWAL starts a new segment at LSN next in dir, creating dir, and makes the spare; the
// folders are synced so the new segment survives a crash before its first record is
// acknowledged.
func openWAL(dir string, next uint64, segmentSize int64) (*wal, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("create log folder: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	l := &wal{dir: dir, next: next, segmentSize: segmentSize}
	l.fill = l.zeroFill
	size := min(segmentSize, firstSegmentSize)
	f, err := makeSpare(dir, size, l.fill)
	if err == nil {
		err = l.install(f, size)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// makeSpare creates the spare file, filled and fsynced: its size and blocks are durable before
// a record is written in it, so no record's sync commits them.
func makeSpare(dir string, size int64, fill func(*os.File, int64) error) (*os.File, error) {
	name := filepath.Join(dir, spareName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create log segment: %w", err)
	}
	if err = testFailWrite("log segment"); err == nil {
		err = fill(f, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(name)
		return nil, fmt.Errorf("fill log segment %s: %w", name, err)
	}
	return f, nil
}

// prepareSpare makes the next segment in the background, as etcd's WAL file pipeline does, so
// a roll costs a rename and a folder sync, not the file's creation and filling. append starts
// it once the segment is half full, so a short-lived store writes no spare it will not use.
func (l *wal) prepareSpare() {
	ch := make(chan spareFile, 1)
	l.spare = ch
	dir, size, fill := l.dir, l.segmentSize, l.fill
	go func() {
		f, err := l.takeRecycled(dir, size)
		if f == nil && err == nil {
			f, err = makeSpare(dir, size, fill)
		}
		ch <- spareFile{f, err}
	}()
}

// install renames the spare f, filled to size, to the segment starting at l.next, syncs the
// folder and appends to it from now on.
func (l *wal) install(f *os.File, size int64) error {
	name := segmentName(l.dir, l.next)
	err := os.Rename(filepath.Join(l.dir, spareName), name)
	if err == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("start log segment: %w", err)
	}
	l.f, l.name, l.size, l.limit = f, name, 0, size
	return nil
}

// put writes payload as the record l.next after the last one, not synced: sync makes it
// durable and counts it in the log. A record put and not synced is not the log's: the next put
// writes over it. On an error the segment may end in a part of it: recovery drops a torn tail.
func (l *wal) put(payload []byte) (lsn uint64, err error) {
	lsn = l.next
	if uint64(len(payload)) > math.MaxUint32 {
		return 0, fmt.Errorf("append to log %s: a record of %d bytes is over the format's 4 GiB", l.name, len(payload))
	}
	b := slices.Grow(l.buf[:0], walHeader+len(payload))[:walHeader]
	binary.BigEndian.PutUint32(b[0:], uint32(len(payload)))
	binary.BigEndian.PutUint64(b[8:], lsn)
	binary.BigEndian.PutUint32(b[4:], walSum(b[8:16], payload))
	b = append(b, payload...)
	l.buf = b
	write := l.write
	if l.failWrite != nil {
		write = l.failWrite
	}
	if _, err := write(l.f, b); err != nil {
		return 0, fmt.Errorf("append to log %s: %w", l.name, err)
	}
	return lsn, nil
}

// startWriteback starts the device's write of the record put last, for work to overlap it
// before sync waits for it.
func (l *wal) startWriteback() { writeback(l.f, l.size, int64(len(l.buf))) }

// sync makes the record put last durable and counts it in the log.
func (l *wal) sync() error {
	syncFile := fdatasync
	if l.failSync != nil {
		syncFile = l.failSync
	}
	if err := syncFile(l.f); err != nil {
		return fmt.Errorf("sync log %s: %w", l.name, err)
	}
	b := l.buf
	l.size += int64(len(b))
	l.next++
	if l.spare == nil && l.size >= l.limit/2 {
		l.prepareSpare()
	}
	return nil
}

func (l *wal) write(f *os.File, b []byte) (int, error) { return f.WriteAt(b, l.size) }

func walSum(lsn, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(lsn, castagnoli), castagnoli, payload)
}

// full reports whether the segment has reached its size and the log should roll.
func (l *wal) full() bool { return l.size >= l.limit }

// roll starts the next segment, the spare made in the background, and closes the current one
// (every record in it synced); it returns the closed segment's path, for the next checkpoint to
// remove once bbolt is synced. It waits for the spare if it is not made yet, and starts it if
// no append has (a record larger than half the segment). On an error (the spare could not be
// filled: a full disk) the current segment stays open and intact.
func (l *wal) roll() (string, error) {
	if l.spare == nil {
		l.prepareSpare()
	}
	sp := <-l.spare
	l.spare = nil
	if sp.err != nil {
		return "", sp.err
	}
	old, oldF := l.name, l.f
	if err := l.install(sp.f, l.segmentSize); err != nil {
		return "", err
	}
	if err := oldF.Close(); err != nil {
		return "", fmt.Errorf("close log segment %s: %w", old, err)
	}
	return old, nil
}

// close closes the segment, and removes the spare once it is made (or its filling stopped).
func (l *wal) close() error {
	l.closing.Store(true)
	if l.spare != nil {
		if sp := <-l.spare; sp.f != nil {
			sp.f.Close()
			os.Remove(filepath.Join(l.dir, spareName))
		}
		l.spare = nil
	}
	return l.f.Close()
}

// stillLinked checks that the segment is still the file at its path: a record synced into a
// segment deleted from outside (the log folder removed under a running store) would be lost
// at the next Open. The writer checks before each batch (checkLog): two inode lookups
// (sameFileAt), against a sync's milliseconds.
func (l *wal) stillLinked() error {
	same, err := sameFileAt(l.f, l.name)
	if err != nil {
		return fmt.Errorf("sync log %s: %w", l.name, err)
	}
	if !same {
		return fmt.Errorf("log segment %s: %w", l.name, ErrLogRemoved)
	}
	return nil
}
