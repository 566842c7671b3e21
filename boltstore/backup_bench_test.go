package boltstore

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// benchDB is a closed database of about size bytes of events, in a folder of b's.
func benchDB(b *testing.B, size int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "wend.db")
	s, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	const perRun = 20 * 4000
	commitRuns(b, s, "r", size/perRun, 20, 4000)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkBackup: SaveBackup of a 64 MiB database from an open store, MB/s of the file.
func BenchmarkBackup(b *testing.B) {
	path := benchDB(b, 64<<20)
	s, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	dst := filepath.Join(b.TempDir(), "copy.db")
	for b.Loop() {
		n, err := SaveBackup(dst, true, func(w io.Writer) (int64, error) { return s.WriteBackup(w, nil) })
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(n)
	}
}

// BenchmarkCompact: Compact of a 64 MiB database, MB/s of the file before.
func BenchmarkCompact(b *testing.B) {
	path := benchDB(b, 64<<20)
	for b.Loop() {
		res, err := Compact(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(res.Before)
	}
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "MiB-after")
	}
}
