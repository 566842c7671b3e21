package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeapProfileOnStop: with WEND_HEAPPROFILE set, serve's stop writes a heap profile there
// (pprof's gzipped protobuf); a path it cannot create is reported, not fatal.
func TestHeapProfileOnStop(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path, wantErr string
	}{
		{"unset", "", ""},
		{"written", filepath.Join(dir, "serve.heap"), ""},
		{"no such folder", filepath.Join(dir, "missing", "serve.heap"), "WEND_HEAPPROFILE: open " + filepath.Join(dir, "missing")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(heapProfileEnv, tc.path)
			var stderr bytes.Buffer
			writeHeapProfile(&stderr)
			if tc.wantErr != "" {
				if !strings.Contains(stderr.String(), tc.wantErr) {
					t.Fatalf("stderr %q, want it to say %q", stderr.String(), tc.wantErr)
				}
				return
			}
			if stderr.Len() > 0 {
				t.Fatalf("stderr %q, want nothing", stderr.String())
			}
			if tc.path == "" {
				return
			}
			b, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				t.Fatalf("the profile does not start with gzip's magic: % x", b[:min(len(b), 8)])
			}
		})
	}
}
