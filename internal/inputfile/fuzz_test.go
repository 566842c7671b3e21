package inputfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadLimit: whatever a regular file holds and whatever the limit, Read returns the whole
// content exactly when it fits, and a TooBigError naming its true size when it does not.
func FuzzReadLimit(f *testing.F) {
	f.Add([]byte("wend: v1\n"), uint16(9))
	f.Add([]byte("wend: v1\n"), uint16(8))
	f.Add([]byte{}, uint16(0))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte, limit uint16) {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Read(p, int64(limit))
		if len(content) <= int(limit) {
			if err != nil || !bytes.Equal(b, content) {
				t.Fatalf("%d bytes under a %d limit: %d bytes, %v", len(content), limit, len(b), err)
			}
			return
		}
		var e *TooBigError
		if !errors.As(err, &e) || e.Size != int64(len(content)) || b != nil {
			t.Fatalf("%d bytes over a %d limit: %d bytes, %v", len(content), limit, len(b), err)
		}
	})
}
