//go:build unix

package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadRefusesSpecialFiles: a FIFO without a writer (which a plain open would wait on for
// ever), a device that never ends, and a link to one are refused by what they are.
func TestReadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "flow.wend.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(dir, "zero.wend.yaml")
	if err := os.Symlink("/dev/zero", zeroLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{"/dev/zero", "a character device"},
		{zeroLink, "a character device"},
	} {
		_, err := Read(c.path, 1<<20)
		var e *NotRegularError
		if !errors.As(err, &e) || e.Kind != c.kind {
			t.Errorf("Read(%s) = %v, want it refused as %s", c.path, err, c.kind)
		}
		if IsRegular(c.path) {
			t.Errorf("IsRegular(%s) = true", c.path)
		}
	}
}
