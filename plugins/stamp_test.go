package plugins

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStampSeesChanges: what a build's stamp notices on this OS. Size and modification time
// everywhere; a same-size copy with the same modification time renamed over the file only
// where the stamp has the inode (not on Windows, nor under -tags wend_portable).
func TestStampSeesChanges(t *testing.T) {
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
		seen   bool
	}{
		{"untouched", func(*testing.T, string) {}, false},
		{"other size", func(t *testing.T, path string) { write(t, path, "v2 longer", old) }, true},
		{"same size, other mtime", func(t *testing.T, path string) {
			write(t, path, "v2", old.Add(time.Second))
		}, true},
		{"same size and mtime, renamed over", func(t *testing.T, path string) {
			write(t, path+".new", "v2", old)
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}, stampHasInode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plugin")
			write(t, path, "v1", old)
			before := stampAt(t, path)
			tt.change(t, path)
			if got := stampAt(t, path) != before; got != tt.seen {
				t.Fatalf("stamp changed = %v, want %v (stampHasInode %v)", got, tt.seen, stampHasInode)
			}
		})
	}
}

func write(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func stampAt(t *testing.T, path string) fileStamp {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return stampOf(fi)
}

// TestStatStampIsStampOf: the per-try check's stamp (statStamp) equals the stamp of the same
// file taken from its FileInfo and from the open file that is hashed, so an untouched file is
// never hashed again; and a missing file is an error, not a stamp.
func TestStatStampIsStampOf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugin")
	write(t, path, "v1", time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	got, err := statStamp(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := stampAt(t, path); got != want {
		t.Fatalf("statStamp %+v, stampOf(os.Stat) %+v", got, want)
	}
	if _, hashed, err := hashFile(path); err != nil || got != hashed {
		t.Fatalf("statStamp %+v, hashFile's %+v (%v)", got, hashed, err)
	}
	if _, err := statStamp(path + ".missing"); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v, want not-exist", err)
	}
}
