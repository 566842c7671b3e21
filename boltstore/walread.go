package boltstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// errTorn is a log record the file ends inside of, or the last record of the last segment
// failing its checksum: an append that did not complete (a crash, a full disk). It was never
// acknowledged, since a commit is answered only after its record is synced, and is dropped.
var errTorn = errors.New("torn tail")

// segmentReader streams the records of one segment, one at a time: a log larger than memory is
// replayed in the memory of its largest record.
type segmentReader struct {
	name string
	r    *bufio.Reader
	off  int64 // where the next record starts
	size int64 // the file's size
	last bool  // the newest segment, the only one whose tail may be torn
	hdr  [walHeader]byte
	buf  []byte
}

// next returns the next record's LSN and payload (valid until the following call), io.EOF at
// the end of the segment, errTorn for a torn tail, or an error naming the damage.
func (s *segmentReader) next() (uint64, []byte, error) {
	if s.off == s.size {
		return 0, nil, io.EOF
	}
	torn := func(what string) error {
		if s.last && s.off+walHeader+int64(binary.BigEndian.Uint32(s.hdr[0:])) >= s.size {
			return errTorn
		}
		return fmt.Errorf("log %s: record at offset %d: %s: %w", s.name, s.off, what, ErrDamaged)
	}
	if s.size-s.off < walHeader {
		if s.last {
			return 0, nil, errTorn
		}
		return 0, nil, fmt.Errorf("log %s: %d stray bytes at offset %d: %w", s.name, s.size-s.off, s.off, ErrDamaged)
	}
	if _, err := io.ReadFull(s.r, s.hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("log %s: %w", s.name, err)
	}
	n := int64(binary.BigEndian.Uint32(s.hdr[0:]))
	if n == 0 { // no record is empty: zeros, as a file system may leave past an unsynced end
		if s.last && s.zerosToEnd() {
			return 0, nil, errTorn
		}
		return 0, nil, fmt.Errorf("log %s: record at offset %d: an empty record: %w", s.name, s.off, ErrDamaged)
	}
	if s.off+walHeader+n > s.size { // checked before allocating: a corrupt length allocates nothing
		return 0, nil, torn("it runs past the end of the file")
	}
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	payload := s.buf[:n]
	if _, err := io.ReadFull(s.r, payload); err != nil {
		return 0, nil, fmt.Errorf("log %s: %w", s.name, err)
	}
	if walSum(s.hdr[8:16], payload) != binary.BigEndian.Uint32(s.hdr[4:]) {
		return 0, nil, torn("checksum mismatch")
	}
	s.off += walHeader + n
	return binary.BigEndian.Uint64(s.hdr[8:]), payload, nil
}

// zerosToEnd reports whether the segment holds only zeros from the header just read to its end.
func (s *segmentReader) zerosToEnd() bool {
	if s.hdr != [walHeader]byte{} {
		return false
	}
	var buf [4096]byte
	for left := s.size - s.off - walHeader; left > 0; {
		n, err := s.r.Read(buf[:min(left, int64(len(buf)))])
		if err != nil {
			return false
		}
		for _, c := range buf[:n] {
			if c != 0 {
				return false
			}
		}
		left -= int64(n)
	}
	return true
}

// readLog calls fn on every record of the log's segments in LSN order, checking the LSNs run on
// one by one. It stops at a torn tail of the newest segment; any other damage is an error.
func readLog(names []string, fn func(lsn uint64, payload []byte) error) error {
	var prev uint64
	for i, name := range names {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return fmt.Errorf("open log: %w", err)
		}
		s := &segmentReader{name: name, r: bufio.NewReaderSize(f, 1<<20), size: fi.Size(), last: i == len(names)-1}
		for {
			lsn, payload, err := s.next()
			if err == io.EOF || errors.Is(err, errTorn) {
				break
			}
			if err == nil && prev != 0 && lsn != prev+1 {
				err = fmt.Errorf("log %s: record %d follows record %d: %w", name, lsn, prev, ErrDamaged)
			}
			if err == nil {
				prev = lsn
				err = fn(lsn, payload)
			}
			if err != nil {
				f.Close()
				return err
			}
		}
		f.Close()
	}
	return nil
}
