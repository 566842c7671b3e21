// Package inputfile reads the files wend is given — workflows, test files, inputs, exports,
// token files — so that no file can cost more than its limit: only a regular file is read
// (a FIFO would block for ever, a device such as /dev/zero never ends), a symbolic link is
// followed only to a regular file, and at most the limit is read, whatever the file claims.
package inputfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// TooBigError is a file over its limit: Size is what it held when it was opened (at least
// Limit+1 when it grew while being read).
type TooBigError struct {
	Path  string
	Size  int64
	Limit int64
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit", e.Path, e.Size, e.Limit)
}

// NotRegularError is a path that names something other than a regular file.
type NotRegularError struct {
	Path string
	Kind string // "a directory", "a named pipe (FIFO)", "a device", "a socket", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; give the path of a file", e.Path, e.Kind)
}

// Open opens the regular file at path for reading, without blocking on a FIFO; for a reader
// that looks at part of a file (its first bytes) rather than reading it whole. Errors are
// *fs.PathError from opening it, or *NotRegularError.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Kind: kind(st.Mode())}
	}
	return f, st, nil
}

// Read returns the content of the regular file at path, of at most limit bytes. Errors are
// *fs.PathError from opening it, *NotRegularError, or *TooBigError.
func Read(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, &TooBigError{Path: path, Size: st.Size(), Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &TooBigError{Path: path, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// ReadAll reads r to its end but refuses more than limit bytes: for standard input, which
// may rightly be a pipe. name says what r is in the error.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooBigError{Path: name, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// IsRegular says whether path names a regular file, following symbolic links, without opening
// it: for walks that pick files by name and must pass over a FIFO or a link to a device.
func IsRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}
