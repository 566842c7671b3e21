package boltstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestLogRemovedStopsAcknowledging: the log folder deleted under a running store (rm -rf
// DB.wal) makes the next commit fail with ErrLogRemoved instead of being acknowledged into a
// file no Open will read, every later commit fails too, and a restart finds every commit
// acknowledged before.
func TestLogRemovedStopsAcknowledging(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(t *testing.T, path string)
	}{
		{"folder", func(t *testing.T, path string) { must(t, os.RemoveAll(walDir(path))) }},
		{"segment", func(t *testing.T, path string) {
			names, err := segments(walDir(path))
			must(t, err)
			for _, n := range names {
				must(t, os.Remove(n))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wend.db")
			s := openAt(t, path, Options{})
			ctx := context.Background()
			u := storetest.Started("wf", "r1", t0)
			for range 3 {
				must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}))
				u = storetest.Next(u.Run, history.ActivityCompleted, 1)
			}
			acked := u.Run.LastSeq - 1
			tc.remove(t, path)
			for i := range 2 {
				err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}})
				if !errors.Is(err, ErrLogRemoved) {
					t.Fatalf("commit %d after the log was removed: %v, want ErrLogRemoved", i, err)
				}
			}
			if err := s.Close(); !errors.Is(err, ErrLogRemoved) {
				t.Fatalf("Close() = %v, want ErrLogRemoved", err)
			}
			s = openAt(t, path, Options{})
			r, err := s.Run("r1")
			must(t, err)
			if r.LastSeq < acked {
				t.Fatalf("after restart the run is at seq %d, want at least the acknowledged %d", r.LastSeq, acked)
			}
			must(t, s.Close())
		})
	}
}
