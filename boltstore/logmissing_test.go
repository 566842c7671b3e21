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
