package boltstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Where a segment's records end. A segment is preallocated (wal.go), so its records are followed
// by zeros (a segment named without its size, from an older wend, may instead end at the end of
// the file, its last record run past the preallocated size), or end with the roll record. The
// records end at the first one that is not whole, not valid (its length zero or past the
// file's end, its checksum wrong) or not the LSN expected: a torn append (a crash, a full disk:
// never acknowledged, since a commit is answered only after its record is synced), the zeros of
// the preallocated tail, or a stale record.
// Appends are sequential and each is synced before the next is written, so no whole, valid record
// with a later LSN can follow a torn one: one that does is damage in the middle of the log (a
// record lost after it was acknowledged), and the rest of the segment is searched for one
// (laterRecord), so damage is reported, never replayed around or silently dropped.

// segmentReader streams the records of one segment, one at a time: a log larger than memory is
// replayed in the memory of its largest record.
type segmentReader struct {
	name string
	f    *os.File
	r    *bufio.Reader
	off  int64  // where the next record starts
	size int64  // the file's size
	want uint64 // the LSN the next record must have
	hdr  [walHeader]byte
	buf  []byte
	// rolled is set when the records end with the roll record: the next segment starts at want.
	rolled bool
}

// next returns the next record's LSN and payload (valid until the following call), io.EOF at
// the end of the segment's records, or an error naming the damage.
func (s *segmentReader) next() (uint64, []byte, error) {
	if s.size-s.off < walHeader {
		return 0, nil, s.end("too short for a header")
	}
	if _, err := io.ReadFull(s.r, s.hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("log %s: %w", s.name, err)
	}
	n := int64(binary.BigEndian.Uint32(s.hdr[0:]))
	lsn := binary.BigEndian.Uint64(s.hdr[8:])
	switch {
	case n == 0 && lsn == 0:
		return 0, nil, s.end("zeros") // the preallocated tail
	case n == 0:
		return 0, nil, s.end("an empty record")
	case lsn != s.want: // checked before reading: a stale or corrupt header allocates nothing
		return 0, nil, s.end(fmt.Sprintf("record %d where %d was due", lsn, s.want))
	case s.off+walHeader+n > s.size:
		return 0, nil, s.end("it runs past the end of the file")
	}
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	payload := s.buf[:n]
	if _, err := io.ReadFull(s.r, payload); err != nil {
		return 0, nil, fmt.Errorf("log %s: %w", s.name, err)
	}
	if walSum(s.hdr[8:16], payload) != binary.BigEndian.Uint32(s.hdr[4:]) {
		return 0, nil, s.end("checksum mismatch")
	}
	if bytes.Equal(payload, rollRecord) {
		s.rolled = true
		return 0, nil, io.EOF
	}
	s.off += walHeader + n
	s.want++
	return lsn, payload, nil
}

// end is what the reader returns where the records stop: io.EOF, unless a later record follows,
// which makes what stopped them (what) damage.
func (s *segmentReader) end(what string) error {
	at, lsn, err := laterRecord(s.f, s.off, s.size, s.want)
	switch {
	case err != nil:
		return fmt.Errorf("log %s: %w", s.name, err)
	case at < 0:
		return io.EOF
	}
	return logDamaged("segment %s: record at offset %d: %s, yet record %d follows at offset %d",
		filepath.Base(s.name), s.off, what, lsn, at)
}

// laterRecord searches f from off to size for a whole, valid record with an LSN past want (the
// one that was due at off), as can only be there if a record was damaged after it was written.
// It returns its offset and LSN, or -1. Every offset is a candidate: what stopped the records
// may be a damaged length, so where the next record starts is unknown. An LSN is at most want
// plus the records that fit before it, which rules out most offsets at one comparison (zeros
// among them): 32 MiB of tail take tens of milliseconds, once, at an Open after a crash.
func laterRecord(f *os.File, off, size int64, want uint64) (int64, uint64, error) {
	const chunk = 1 << 20
	maxLSN := want + uint64((size-off)/(walHeader+1))
	buf := make([]byte, min(chunk+walHeader, max(size-off, 0)))
	var payload []byte
	for base := off; base+walHeader <= size; base += chunk {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-base)], base)
		if err != nil && err != io.EOF {
			return 0, 0, err
		}
		b := buf[:n]
		for p := 0; p+walHeader <= len(b) && p < chunk; p++ {
			lsn := binary.BigEndian.Uint64(b[p+8:])
			if lsn <= want || lsn > maxLSN {
				continue
			}
			length := int64(binary.BigEndian.Uint32(b[p:]))
			at := base + int64(p)
			if length == 0 || at+walHeader+length > size {
				continue
			}
			if int64(cap(payload)) < length {
				payload = make([]byte, length)
			}
			payload = payload[:length]
			if _, err := f.ReadAt(payload, at+walHeader); err != nil {
				return 0, 0, err
			}
			if walSum(b[p+8:p+16], payload) == binary.BigEndian.Uint32(b[p+4:]) {
				return at, lsn, nil
			}
		}
	}
	return -1, 0, nil
}

// segmentLSN is the LSN a segment's name says its first record has.
func segmentLSN(name string) (uint64, error) {
	first, _, ok := parseSegment(name)
	if !ok {
		return 0, logDamaged("%s: not a segment's name", filepath.Base(name))
	}
	return first, nil
}

// readLog calls fn on every record of the log's segments in LSN order. Each segment must have
// the size its name gives (walcheck.go), its records must start at the LSN its name says and
// run on one by one, and each segment must start where the one before it ended: a segment's
// records may stop short only where nothing of the log follows (see above), and a segment
// ending with the roll record must be followed by the one it names. Anything else is an error
// wrapping ErrLogDamaged (and ErrDamaged); fn's errors are returned as they are.
func readLog(names []string, fn func(lsn uint64, payload []byte) error) error {
	var prev, prevFirst uint64 // the last record's LSN, the first of its segment
	rolled := false
	for i, name := range names {
		first, size, ok := parseSegment(name)
		if !ok {
			return logDamaged("%s: not a segment's name", filepath.Base(name))
		}
		if i > 0 && first == prevFirst {
			return logDamaged("segments %s and %s both start at record %d", filepath.Base(names[i-1]), filepath.Base(name), first)
		}
		prevFirst = first
		if i > 0 && first != prev+1 {
			return logDamaged("segment %s starts at record %d, the one before it ends at record %d: a segment between them is missing", filepath.Base(name), first, prev)
		}
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return fmt.Errorf("open log: %w", err)
		}
		// A segment of another size is damage, reported once the records it still holds are
		// read: accepting the loss keeps them.
		var resized error
		if size >= 0 && fi.Size() != size {
			resized = logDamaged("segment %s is %d bytes, its name says %d: it was cut short or grown after it was written", filepath.Base(name), fi.Size(), size)
		}
		s := &segmentReader{name: name, f: f, r: bufio.NewReaderSize(f, 1<<20), size: fi.Size(), want: first}
		for {
			lsn, payload, err := s.next()
			if err == io.EOF {
				break
			}
			if err == nil {
				err = fn(lsn, payload)
			}
			if err != nil {
				f.Close()
				return err
			}
		}
		f.Close()
		if resized != nil {
			return resized
		}
		prev, rolled = s.want-1, s.rolled
	}
	if rolled {
		return logDamaged("segment %s ends with a roll to the segment starting at record %d, which is missing", filepath.Base(names[len(names)-1]), prev+1)
	}
	return nil
}
