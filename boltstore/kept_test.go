package boltstore

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
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

// helperKeeper commits run ra, keeps "m" at the feed's position after it, checkpoints when
// arg is "checkpoint", commits run rb, says so and kills itself.
func helperKeeper(path, arg string) error {
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wa", "ra", t0)}}); err != nil {
		return err
	}
	_, pos, _ := s.ChangedRuns(0)
	if err := s.Keep("m", pos, []byte("sum"), map[string][]byte{"ra": []byte("a")}, false); err != nil {
		return err
	}
	if arg == "checkpoint" {
		if err := s.settle(); err != nil {
			return err
		}
	}
	if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wb", "rb", t0)}}); err != nil {
		return err
	}
	fmt.Println("committed")
	killSelf()
	select {}
}

// TestKeptAcrossKill: what a reader keeps goes with the commits it was kept beside: killed
// before a checkpoint, the kept position and values are gone with the open transaction while
// the log's replay brings back the commits and the change feed (a reader then reads every run,
// as the first time); killed after one, they are there, and the feed names the run committed
// after the position, and only it.
func TestKeptAcrossKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a process")
	}
	for _, mode := range []string{"open", "checkpoint"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wend.db")
			cmd := helper(t, "keeper", path, mode)
			out, _ := cmd.Output()
			if string(out) != "committed\n" {
				t.Fatalf("keeper said %q", out)
			}
			s := openAt(t, path, Options{})
			for _, id := range []string{"ra", "rb"} {
				if _, err := s.Run(id); err != nil {
					t.Fatalf("run %s after the kill: %v", id, err)
				}
			}
			pos, sum, runs, ok, err := s.Kept("m", []string{"ra"})
			must(t, err)
			_, now, _ := s.ChangedRuns(0)
			switch {
			case mode == "open" && ok:
				t.Fatalf("kept before no checkpoint, read after the kill: position %d", pos)
			case mode == "checkpoint" && (!ok || string(sum) != "sum" || string(runs["ra"]) != "a" || pos >= now):
				t.Fatalf("kept before a checkpoint: %d %q %q ok %v, feed at %d", pos, sum, runs, ok, now)
			case mode == "checkpoint":
				if ids, _, complete := s.ChangedRuns(pos); !complete || !slices.Equal(ids, []string{"rb"}) {
					t.Fatalf("changed after the kept position: %v complete %v, want [rb]", ids, complete)
				}
			}
		})
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
