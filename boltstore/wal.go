package boltstore

import (
	"cmp"
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
// The log is a folder, PATH.wal, of segment files, each named by the log sequence number (LSN)
// of its first record, 20 decimal digits, and its size in bytes: "%020d-%d.log". A record is
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
//
// A segment keeps the size its name gives from its creation to its removal: a record is
// written only where it fits, with room left for the roll record (rollRecord), so a file of
// another size was cut short (or grown) after it was made, and Open refuses it (walcheck.go).
// A record that does not fit starts the next segment; one larger than a whole segment gets a
// segment of its own, made to its size. At each roll the closed segment ends with the roll
// record, saying the log goes on in the next segment, and each checkpoint writes the first LSN
// of the segment appended to in bbolt's meta bucket (keyLogTail): between them, a deleted
// newest segment is always missed by something that outlives it.

// walHeader is the bytes of a record before its payload.
const walHeader = 16

// zeroPage is what a record's write is padded with (put).
var zeroPage [fillWrite]byte

// DefaultLogSegmentSize is the size of a log segment: a record that does not fit in the rest
// of one starts a new segment, and the checkpoint after it removes the old ones (bbolt synced).
// It bounds the log replayed at Open, and each segment file (and the spare) is filled to it,
// but the first of an Open (firstSegmentSize) and one made for a larger record (room).
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
	f           *os.File  // the segment appended to
	name        string    // its path
	link        linkCheck // whether f is still the file at name (stillLinked)
	first       uint64    // the LSN its name gives its first record
	size        int64     // the end of its last whole record; zeros follow, to the filled end
	limit       int64     // the segment's filled size, in its name
	next        uint64    // the LSN of the next record
	segmentSize int64
	buf         []byte         // the record put last, then zeros to the end of its last page
	rec         int            // the record's length in buf
	pending     bool           // buf is put but not written: sync writes it (writeSync)
	writeSyncs  bool           // put leaves the write to sync, until writeSync is refused
	writeSync   writeSyncFunc  // writeSync; tests refuse it
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

// writeSyncFunc writes b at off and makes it durable in one call; done is false, with nothing
// written, when that is refused (fdatasync_linux.go).
type writeSyncFunc func(f *os.File, b []byte, off int64) (done bool, err error)

func walDir(dbPath string) string { return dbPath + ".wal" }

func segmentName(dir string, first uint64, size int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d-%d.log", first, size))
}

// parseSegment reads a segment's name: the LSN of its first record and its size. A name of the
// form wend wrote before segments were named by their size, "%016x.log" (the LSN in hex), gives
// size -1: such a segment is read without its size checked, and its last record may run past
// its filling.
func parseSegment(name string) (first uint64, size int64, ok bool) {
	base, ok := strings.CutSuffix(filepath.Base(name), ".log")
	if !ok {
		return 0, 0, false
	}
	lsn, dec, sized := strings.Cut(base, "-")
	if !sized {
		if len(lsn) != 16 || strings.ToLower(lsn) != lsn { // as %016x wrote it: one name per LSN
			return 0, 0, false
		}
		first, err := strconv.ParseUint(lsn, 16, 64)
		return first, -1, err == nil
	}
	if len(lsn) != 20 {
		return 0, 0, false
	}
	first, err := strconv.ParseUint(lsn, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	size, err = strconv.ParseInt(dec, 10, 64)
	if err != nil || size <= 0 || strconv.FormatInt(size, 10) != dec {
		return 0, 0, false
	}
	return first, size, true
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
		if _, _, ok := parseSegment(e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.SortFunc(out, bySegmentLSN)
	return out, nil
}

// bySegmentLSN orders segments' names by their first record.
func bySegmentLSN(a, b string) int {
	fa, _, _ := parseSegment(a)
	fb, _, _ := parseSegment(b)
	return cmp.Compare(fa, fb)
}

// spareName is the next segment, made ahead of the roll that renames it (prepareSpare).
const spareName = "next.spare"

// largeName is a segment made at once for a record larger than a whole segment (room).
const largeName = "large.spare"

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
	l := &wal{dir: dir, next: next, segmentSize: segmentSize, writeSyncs: writeSyncs, writeSync: writeSync}
	l.fill = l.zeroFill
	size := min(segmentSize, firstSegmentSize)
	f, err := makeSpare(dir, spareName, size, l.fill)
	if err == nil {
		err = l.install(f, spareName, size)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// makeSpare creates the spare file, filled and fsynced: its size and blocks are durable before
// a record is written in it, so no record's sync commits them.
func makeSpare(dir, spare string, size int64, fill func(*os.File, int64) error) (*os.File, error) {
	name := filepath.Join(dir, spare)
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
			f, err = makeSpare(dir, spareName, size, fill)
		}
		ch <- spareFile{f, err}
	}()
}

// install renames the spare f (the file spare), filled to size, to the segment starting at
// l.next, syncs the folder and appends to it from now on.
func (l *wal) install(f *os.File, spare string, size int64) error {
	name := segmentName(l.dir, l.next, size)
	err := os.Rename(filepath.Join(l.dir, spare), name)
	if err == nil {
		err = syncDir(l.dir)
	}
	var link linkCheck
	if err == nil {
		link, err = newLinkCheck(f, name)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("start log segment: %w", err)
	}
	l.f, l.name, l.link, l.first, l.size, l.limit = f, name, link, l.next, 0, size
	return nil
}

// testHookRoll, set only by tests, is called at each step of a roll, so a crash test can kill
// the process exactly there.
var testHookRoll = func(step string) {}

// rollRecord is the payload of the record that ends a segment at a roll, with the LSN the
// next segment starts at: the log goes on there, so that segment must exist. No batch reads
// so (walbatch.go: no commits, then bytes left over).
var rollRecord = []byte("\x00roll")

// rollSize is the room a segment keeps after its records for the roll record.
const rollSize = walHeader + 5

// fits reports whether a record of n payload bytes fits in the segment, before the room kept
// for the roll record.
func (l *wal) fits(n int) bool { return l.size+walHeader+int64(n)+rollSize <= l.limit }

// room makes the segment one that a record of n payload bytes fits in: when it does not fit
// in this one, the log rolls, to the spare or, for a record larger than a whole segment, to a
// segment made for it at once. It returns the path of the segment closed, "" when none.
func (l *wal) room(n int) (closed string, err error) {
	if l.fits(n) {
		return "", nil
	}
	need := walHeader + int64(n) + rollSize
	if need <= l.segmentSize {
		return l.roll()
	}
	size := (need + fillWrite - 1) / fillWrite * fillWrite
	f, err := makeSpare(l.dir, largeName, size, l.fill)
	if err != nil {
		return "", err
	}
	return l.rollTo(f, largeName, size)
}

// put writes payload as the record l.next after the last one, not synced: sync makes it
// durable and counts it in the log. A record put and not synced is not the log's: the next put
// writes over it. On an error the segment may end in a part of it: recovery drops a torn tail.
// Where the kernel writes and syncs in one call (writeSync), put only lays the record out and
// sync writes it: one system call a commit instead of a write and an fdatasync.
func (l *wal) put(payload []byte) (lsn uint64, err error) {
	lsn = l.next
	if uint64(len(payload)) > math.MaxUint32 {
		return 0, fmt.Errorf("append to log %s: a record of %d bytes is over the format's 4 GiB", l.name, len(payload))
	}
	if !l.fits(len(payload)) { // room was not made: the segment would change its size
		return 0, fmt.Errorf("append to log %s: a record of %d bytes does not fit in the %d bytes left", l.name, len(payload), l.limit-l.size-rollSize)
	}
	b := appendRecord(l.buf[:0], lsn, payload)
	l.rec = len(b)
	// Zeros to the end of the page the record ends in: the write covers each page it starts to
	// its end, so the kernel need not read one from the device to keep its other bytes
	// (walfill.go). A segment holds zeros there already, or a recycled one's stale records.
	end := l.size + int64(len(b))
	if pad := min(l.limit, (end+fillWrite-1)/fillWrite*fillWrite) - end; pad > 0 {
		b = append(b, zeroPage[:pad]...)
	}
	l.buf = b
	if l.writeSyncs && l.failWrite == nil && l.failSync == nil {
		l.pending = true
		return lsn, nil
	}
	write := l.write
	if l.failWrite != nil {
		write = l.failWrite
	}
	if _, err := write(l.f, b); err != nil {
		return 0, fmt.Errorf("append to log %s: %w", l.name, err)
	}
	return lsn, nil
}

// sync makes the record put last durable and counts it in the log. A record put but not yet
// written is written and synced in one call; an error there may leave any part of it written,
// as a failed write or sync may.
func (l *wal) sync() error {
	if l.pending {
		l.pending = false
		done, err := l.writeSync(l.f, l.buf, l.size)
		if err == nil && !done { // the kernel has no such call: write, then sync, from now on
			l.writeSyncs = false
			_, err = l.write(l.f, l.buf)
			if err == nil {
				err = fdatasync(l.f)
			}
		}
		if err != nil {
			return fmt.Errorf("sync log %s: %w", l.name, err)
		}
	} else {
		syncFile := fdatasync
		if l.failSync != nil {
			syncFile = l.failSync
		}
		if err := syncFile(l.f); err != nil {
			return fmt.Errorf("sync log %s: %w", l.name, err)
		}
	}
	l.size += int64(l.rec)
	l.next++
	if l.spare == nil && l.size >= l.limit/2 {
		l.prepareSpare()
	}
	return nil
}

func (l *wal) write(f *os.File, b []byte) (int, error) { return f.WriteAt(b, l.size) }

// appendRecord appends the record of payload with LSN lsn to b.
func appendRecord(b []byte, lsn uint64, payload []byte) []byte {
	b = slices.Grow(b, walHeader+len(payload))
	at := len(b)
	b = b[:at+walHeader]
	binary.BigEndian.PutUint32(b[at:], uint32(len(payload)))
	binary.BigEndian.PutUint64(b[at+8:], lsn)
	binary.BigEndian.PutUint32(b[at+4:], walSum(b[at+8:at+16], payload))
	return append(b, payload...)
}

func walSum(lsn, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(lsn, castagnoli), castagnoli, payload)
}

// roll starts the next segment, the spare made in the background, and closes the current one
// (every record in it synced) with the roll record; it returns the closed segment's path, for
// the next checkpoint to remove once bbolt is synced. It waits for the spare if it is not made
// yet, and starts it if no append has (a record larger than half the segment). On an error
// (the spare could not be filled: a full disk) the current segment stays open and intact.
func (l *wal) roll() (string, error) {
	if l.spare == nil {
		l.prepareSpare()
	}
	sp := <-l.spare
	l.spare = nil
	if sp.err != nil {
		return "", sp.err
	}
	return l.rollTo(sp.f, spareName, l.segmentSize)
}

// rollTo installs f (the file spare, of size bytes) as the next segment, then writes the roll
// record into the current one, syncs and closes it. The new segment exists (its folder synced)
// before the roll record says it must: a crash between the two leaves a segment with no record
// after one that does not say so, which reads the same.
func (l *wal) rollTo(f *os.File, spare string, size int64) (string, error) {
	old, oldF, end := l.name, l.f, l.size
	if err := l.install(f, spare, size); err != nil {
		return "", err
	}
	testHookRoll("installed")
	rec := appendRecord(nil, l.next, rollRecord)
	_, err := oldF.WriteAt(rec, end)
	if err == nil {
		err = fdatasync(oldF)
	}
	if cerr := oldF.Close(); err == nil {
		err = cerr
	}
	if err != nil {
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
// at the next Open. The writer checks before each batch (checkLog): one inode lookup of the
// path (linkCheck), against a sync's milliseconds.
func (l *wal) stillLinked() error {
	same, err := l.link.linked()
	if err != nil {
		return fmt.Errorf("sync log %s: %w", l.name, err)
	}
	if !same {
		return fmt.Errorf("log segment %s: %w", l.name, ErrLogRemoved)
	}
	return nil
}
