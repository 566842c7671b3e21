package boltstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestLogMissingRefused: a copy of a running store's database without its log (or beside the
// log of another store) is refused at Open with ErrLogMissing naming the log and the way out;
// AcceptLogLoss opens it; a database closed cleanly opens alone.
func TestLogMissingRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	s := openAt(t, path, Options{})
	must(t, s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{storetest.Started("wf", "r1", t0)}}))
	must(t, s.settle())

	other := filepath.Join(dir, "other.db")
	o := openAt(t, other, Options{})

	for _, tc := range []struct {
		name, want string
		withLog    string // a log folder put beside the copy
	}{
		{name: "no log", want: "is missing"},
		{name: "another's log", want: "is not its own", withLog: walDir(other)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := filepath.Join(t.TempDir(), "copy.db")
			copyFile(t, path, cp)
			if tc.withLog != "" {
				must(t, os.Mkdir(walDir(cp), 0o700))
				copyFile(t, filepath.Join(tc.withLog, logIDName), filepath.Join(walDir(cp), logIDName))
			}
			_, err := Open(cp, Options{})
			if !errors.Is(err, ErrLogMissing) {
				t.Fatalf("Open(copy) = %v, want ErrLogMissing", err)
			}
			for _, w := range []string{tc.want, walDir(cp), acceptLogLossEnv} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			c, err := Open(cp, Options{AcceptLogLoss: true})
			must(t, err)
			must(t, c.Close())
			c, err = Open(cp, Options{}) // closed cleanly now
			must(t, err)
			// Check reports, on every later open, that the database is behind what was acknowledged.
			problems, err := c.Check()
			must(t, err)
			if len(problems) != 1 || !strings.Contains(problems[0], "behind what was acknowledged") || !strings.Contains(problems[0], tc.want) {
				t.Errorf("Check after the accepted loss = %q, want one problem saying the database is behind (%s)", problems, tc.want)
			}
			must(t, c.Close())
		})
	}
	must(t, o.Close())

	must(t, s.Close())
	cp := filepath.Join(t.TempDir(), "clean.db")
	copyFile(t, path, cp)
	c, err := Open(cp, Options{})
	must(t, err)
	if _, err := c.Run("r1"); err != nil {
		t.Fatalf("the copy of a cleanly closed database: %v", err)
	}
	if problems, err := c.Check(); err != nil || len(problems) != 0 {
		t.Errorf("Check of the copy of a cleanly closed database = %q, %v; want no problem", problems, err)
	}
	must(t, c.Close())
}

// TestReopenLeavesItsLogIDAlone: reopening a database that was not closed cleanly goes on with
// the id its log folder holds and does not write that file again. Writing it truncates it
// first, so a process killed between the truncation and the write left a database whose own
// log read as another copy's, refused at the next Open (seen in the crash tests). Here the
// write of the id fails as that kill would: the Open must not reach it, and every commit is
// there after.
func TestReopenLeavesItsLogIDAlone(t *testing.T) {
	img, _, _, _, seq := laggingImage(t, 40, 300, DefaultLogSegmentSize)
	path := img.write(t)
	testFailWrite = func(w string) error {
		if w == "log id" {
			return errors.New("killed between the truncation and the write")
		}
		return nil
	}
	t.Cleanup(func() { testFailWrite = func(string) error { return nil } })
	s, got, err := reopened(t, path)
	if err != nil {
		t.Fatalf("reopening a database not closed cleanly wrote its log id again: %v", err)
	}
	if got != seq {
		t.Errorf("run r1 at seq %d, want %d", got, seq)
	}
	id, err := os.ReadFile(filepath.Join(walDir(path), logIDName))
	must(t, err)
	if string(id) != string(img.segments[logIDName]) {
		t.Errorf("the log id changed on reopen: %x, want %x", id, img.segments[logIDName])
	}
	must(t, s.Close())
}
