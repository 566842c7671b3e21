package boltstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFullTmpfs runs TestOpenOnFullDisk's case on a real full file system: a small tmpfs,
// mounted for the test, which needs root on Linux (it is skipped elsewhere, saying why). With
// the disk full, reading works and the writer's Open fails saying how much space it needs;
// once that much is freed, and no more, the writer's Open recovers every commit and closes.
func TestFullTmpfs(t *testing.T) {
	img, _, _, _, seq := laggingImage(t, 200, 2000, DefaultLogSegmentSize)
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=48m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the test needs root on Linux", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	path := filepath.Join(mnt, "wend.db")
	must(t, os.WriteFile(path, img.db, 0o600))
	must(t, os.Mkdir(walDir(path), 0o700))
	for name, b := range img.segments {
		must(t, os.WriteFile(filepath.Join(walDir(path), name), b, 0o600))
	}
	filler := fillDisk(t, filepath.Join(mnt, "filler"))

	r, err := Open(path, Options{ReadOnly: true})
	must(t, err)
	if run, err := r.Run("r1"); err != nil || run.LastSeq != seq {
		t.Errorf("read on a full disk: %+v, %v; want run r1 at seq %d", run, err, seq)
	}
	if ps, err := r.Check(); err != nil || len(ps) > 0 {
		t.Errorf("check on a full disk: %q, %v", ps, err)
	}
	need := r.recoverySpace()
	must(t, r.Close())

	if _, err := Open(path, Options{}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("Open for writing on a full disk = %v, want ErrDiskFull", err)
	}
	fi, err := filler.Stat()
	must(t, err)
	must(t, filler.Truncate(fi.Size()-need))
	t.Logf("freed the %d bytes the error asked for", need)
	w, got, err := reopened(t, path)
	if err != nil {
		t.Fatalf("Open for writing after freeing the %d bytes it asked for: %v", need, err)
	}
	if got != seq {
		t.Errorf("after recovery run r1 at seq %d, want %d", got, seq)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after recovery: %v", err)
	}
}

// fillDisk writes name until the file system has no space left, and returns it open.
func fillDisk(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Create(name)
	must(t, err)
	t.Cleanup(func() { f.Close() })
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i)
	}
	for {
		_, err := f.Write(buf)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(fmt.Errorf("fill the disk: %w", err))
		}
	}
	for _, n := range []int{4096, 512, 1} { // the last partial blocks
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return f
}
