package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each "heap" line writes a profile (pprof's gzipped protobuf), other lines nothing; a path
// it cannot create is reported, not fatal.
func TestAnswer(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, input, path, wantErr string
		written                    bool
	}{
		{"asked", "heap\n", filepath.Join(dir, "serve.heap"), "", true},
		{"another line", "cpu\n", filepath.Join(dir, "other.heap"), "", false},
		{"no such folder", "heap\n", filepath.Join(dir, "missing", "serve.heap"), "heapserve: open " + filepath.Join(dir, "missing"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			answer(strings.NewReader(tc.input), &stderr, tc.path)
			if tc.wantErr != "" && !strings.Contains(stderr.String(), tc.wantErr) || tc.wantErr == "" && stderr.Len() > 0 {
				t.Fatalf("stderr %q, want %q", stderr.String(), tc.wantErr)
			}
			b, err := os.ReadFile(tc.path)
			if !tc.written {
				if err == nil {
					t.Fatalf("a profile at %s, want none", tc.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				t.Fatalf("the profile does not start with gzip's magic: % x", b[:min(len(b), 8)])
			}
			if _, err := os.Stat(tc.path + ".tmp"); err == nil {
				t.Fatal("the temporary file is left")
			}
		})
	}
}
