package boltstore

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLogSpare prices a spare segment of the default size, made as a running log makes it
// in the background: created, filled with zeros, synced (makeSpare). cpu-ms/op is the process's
// CPU time a spare, what a server's first minutes pay for each segment it cannot recycle.
//
//	go test -run '^$' -bench LogSpare -benchtime 5x ./boltstore/
func BenchmarkLogSpare(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "x.wal")
	if err := os.Mkdir(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	l := &wal{dir: dir, segmentSize: DefaultLogSegmentSize}
	b.ResetTimer()
	cpu := processCPU()
	for range b.N {
		f, err := makeSpare(dir, spareName, DefaultLogSegmentSize, l.zeroFill)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
		if err := os.Remove(filepath.Join(dir, spareName)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}
