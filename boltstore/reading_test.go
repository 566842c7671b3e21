package boltstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// folderState is every file under dir with its size, mode, time and contents' hash: what a
// store opened for reading must leave as it found it.
func folderState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = string(h[:])
		}
		out[p] = fi.Mode().String() + fi.ModTime().String() + sum
		return nil
	})
	must(t, err)
	return out
}

// TestOpenReadingWritesNothing: a store opened for reading after a crash sees every commit the
// log holds past bbolt's checkpoint, checks clean, refuses writes, and leaves every file of the
// database, its log and its folder as it found them; a writer's Open then recovers as usual.
func TestOpenReadingWritesNothing(t *testing.T) {
	img, _, _, _, seq := laggingImage(t, 40, 300, DefaultLogSegmentSize)
	path := img.write(t)
	before := folderState(t, filepath.Dir(path))

	s, err := Open(path, Options{ReadOnly: true})
	must(t, err)
	r, err := s.Run("r1")
	must(t, err)
	if r.LastSeq != seq {
		t.Errorf("run r1 read at seq %d, want %d (the log's records)", r.LastSeq, seq)
	}
	if evs, err := s.Events("r1", 0); err != nil || uint64(len(evs)) != seq {
		t.Errorf("Events(r1) = %d events, %v; want %d", len(evs), err, seq)
	}
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Errorf("Check = %q, %v; want clean", ps, err)
	}
	u := storetest.Next(r, history.ActivityCompleted, 1)
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Commit = %v, want ErrReadOnly", err)
	}
	if err := s.PutScheduleStates(map[string][]byte{"s": []byte("{}")}, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("PutScheduleStates = %v, want ErrReadOnly", err)
	}
	if _, err := s.PurgeRuns(context.Background(), []string{"r1"}, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("PurgeRuns = %v, want ErrReadOnly", err)
	}
	must(t, s.Close())
	after := folderState(t, filepath.Dir(path))
	for p, st := range before {
		if after[p] != st {
			t.Errorf("%s changed by a store opened for reading", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s made by a store opened for reading", p)
		}
	}

	if _, err := Open(filepath.Join(t.TempDir(), "none.db"), Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing, ReadOnly) = %v, want a missing file, none created", err)
	}
	w, got, err := reopened(t, path)
	must(t, err)
	if got != seq {
		t.Errorf("after recovery run r1 at seq %d, want %d", got, seq)
	}
	must(t, w.Close())
}

// TestOpenOnFullDisk: a writer's Open whose recovery finds no space (each write it makes
// failing with ENOSPC in turn) fails with ErrDiskFull naming the database, the space it needs
// and that reading works; a store opened for reading meanwhile reads every commit; once the
// writes succeed again, Open recovers all of them.
func TestOpenOnFullDisk(t *testing.T) {
	img, _, _, _, seq := laggingImage(t, 40, 300, DefaultLogSegmentSize)
	for _, what := range []string{"pid file", "replay", "log segment"} {
		t.Run(what, func(t *testing.T) {
			path := img.write(t)
			testFailWrite = func(w string) error {
				if w == what {
					return syscall.ENOSPC
				}
				return nil
			}
			t.Cleanup(func() { testFailWrite = func(string) error { return nil } })
			_, err := Open(path, Options{})
			if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Open on a full disk = %v, want ErrDiskFull wrapping ENOSPC", err)
			}
			for _, w := range []string{path, "needs ", " MiB free on its disk", "reading commands (wend list, show, history, check)"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			r, err := Open(path, Options{ReadOnly: true})
			must(t, err)
			if run, err := r.Run("r1"); err != nil || run.LastSeq != seq {
				t.Errorf("read on a full disk: %+v, %v; want run r1 at seq %d", run, err, seq)
			}
			must(t, r.Close())

			testFailWrite = func(string) error { return nil }
			w, got, err := reopened(t, path)
			must(t, err)
			if got != seq {
				t.Errorf("after the disk has room: run r1 at seq %d, want %d", got, seq)
			}
			must(t, w.Close())
		})
	}
}

// TestDiskFullMessage compares the error of a writer's Open on a full disk with its golden
// file (UPDATE=1 rewrites it).
func TestDiskFullMessage(t *testing.T) {
	img, _, _, _, _ := laggingImage(t, 40, 300, DefaultLogSegmentSize)
	path := img.write(t)
	testFailWrite = func(w string) error {
		if w == "replay" {
			return syscall.ENOSPC
		}
		return nil
	}
	t.Cleanup(func() { testFailWrite = func(string) error { return nil } })
	_, err := Open(path, Options{})
	if err == nil {
		t.Fatal("Open on a full disk succeeded")
	}
	got := strings.ReplaceAll(err.Error(), filepath.Dir(path), "$DIR") + "\n"
	golden := filepath.Join("testdata", "diskfull.golden")
	if os.Getenv("UPDATE") != "" {
		must(t, os.MkdirAll("testdata", 0o755))
		must(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if got != string(want) {
		t.Errorf("the message differs from %s:\ngot:  %s\nwant: %s", golden, got, want)
	}
}
