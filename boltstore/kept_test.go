package boltstore

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"
)

// TestKeep: what a reader keeps (its position, its sum, a value per run) reads back, in the
// same process and after a reopen; a nil value deletes a run's; a reset deletes every run's
// first; wend check is clean beside it; a store opened for reading keeps nothing.
func TestKeep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	s := openAt(t, path, Options{})
	if _, _, _, ok, err := s.Kept("m", nil); ok || err != nil {
		t.Fatalf("kept before any Keep: ok %v, %v", ok, err)
	}
	startRun(t, s, "alpha", "wa", "ra", "", purgeT0) // an open transaction to keep into
	must(t, s.Keep("m", 7, []byte("sum1"), map[string][]byte{"ra": []byte("a"), "rb": []byte("b")}, false))
	must(t, s.Keep("m", 9, []byte("sum2"), map[string][]byte{"rb": nil, "rc": []byte("c")}, false))
	check := func(s *Store, pos uint64, sum string, runs map[string]string) {
		t.Helper()
		p, sm, rs, ok, err := s.Kept("m", []string{"ra", "rb", "rc"})
		got := map[string]string{}
		for k, v := range rs {
			got[k] = string(v)
		}
		if !ok || err != nil || p != pos || string(sm) != sum || !maps.Equal(got, runs) {
			t.Fatalf("kept: %d %q %v ok %v %v; want %d %q %v", p, sm, got, ok, err, pos, sum, runs)
		}
	}
	check(s, 9, "sum2", map[string]string{"ra": "a", "rc": "c"})
	must(t, s.Close())
	s = openAt(t, path, Options{})
	check(s, 9, "sum2", map[string]string{"ra": "a", "rc": "c"})
	must(t, s.Keep("m", 10, []byte("sum3"), map[string][]byte{"rb": []byte("b")}, true))
	check(s, 10, "sum3", map[string]string{"rb": "b"})
	if ps, err := s.Check(); err != nil || len(ps) != 0 {
		t.Fatalf("check beside kept data: %q %v", ps, err)
	}
	must(t, s.Close())
	r := openAt(t, path, Options{ReadOnly: true})
	check(r, 10, "sum3", map[string]string{"rb": "b"})
	if err := r.Keep("m", 11, nil, nil, false); err == nil {
		t.Fatal("a store opened for reading kept")
	}
}

// BenchmarkKeepAll keeps 100,000 values of 300 bytes in one reset, as the metrics' first
// whole read does.
func BenchmarkKeepAll(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "wend.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	runs := map[string][]byte{}
	for i := range 100_000 {
		runs[fmt.Sprintf("run-%07d", i)] = make([]byte, 300)
	}
	for b.Loop() {
		if err := s.Keep("m", 1, []byte("sum"), runs, true); err != nil {
			b.Fatal(err)
		}
	}
}
