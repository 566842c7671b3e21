package commands

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// TestReadingOnFullDisk: on a full file system (a small tmpfs, mounted for the test: it needs
// root on Linux and is skipped elsewhere, saying why) holding a store left by a crash, with
// commits only its log holds, wend list, show, history and check answer from the database and
// its log, and a command that writes fails saying the disk is full, how much space it needs,
// and that reading works meanwhile.
func TestReadingOnFullDisk(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=40m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the test needs root on Linux", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	db := filepath.Join(mnt, "wend.db")
	crashedStore(t, db)
	fillFS(t, filepath.Join(mnt, "filler"))

	wend := func(args ...string) (int, string, string) {
		var out, errb strings.Builder
		e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := run(e, append(args, "--db", db))
		return code, out.String(), errb.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "r1"},
		{[]string{"show", "r1"}, "r1"},
		{[]string{"history", "r1"}, "ActivityCompleted"},
		{[]string{"check"}, "ok: 1 runs, 3 events checked"},
	} {
		code, out, errs := wend(tc.args...)
		if code != exitOK || !strings.Contains(out, tc.want) {
			t.Errorf("wend %s on a full disk: exit %d, stdout %q, stderr %q; want 0 and %q", tc.args[0], code, out, errs, tc.want)
		}
	}
	code, _, errs := wend("resume")
	for _, w := range []string{db, "the disk is full", "MiB free on its disk", "reading commands (wend list, show, history, check) open it without writing meanwhile"} {
		if code != exitUsage || !strings.Contains(errs, w) {
			t.Errorf("wend resume on a full disk: exit %d, stderr %q; want 2 and %q", code, errs, w)
		}
	}
}

// crashedStore makes at db what a crash leaves: run r1 started and checkpointed, then an
// activity's completion and the run's acknowledged, held only by the log (the file copied while the store
// runs, before it checkpoints them).
func crashedStore(t *testing.T, db string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "wend.db")
	s, err := boltstore.Open(src, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	u := storetest.Started("wf", "r1", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	commit := func(u history.RunUpdate) {
		if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
			t.Fatal(err)
		}
	}
	commit(u)
	if _, err := s.Check(); err != nil { // checkpoints: bbolt holds the start
		t.Fatal(err)
	}
	u = storetest.Next(u.Run, history.ActivityCompleted, 1)
	commit(u)
	u = storetest.Next(u.Run, history.WorkflowCompleted, 1)
	u.Run.Status, u.Run.ClosedReason = history.ClosedBy(u.Events[0])
	u.Run.ClosedAt = u.Events[0].Time
	commit(u)
	copyTree(t, src, db)
	copyTree(t, src+".wal", db+".wal")
}

// copyTree copies a file, or a folder of files.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	fi, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() {
		b, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(to, b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.Mkdir(to, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		copyTree(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
	}
}

// fillFS writes name until its file system has no space left.
func fillFS(t *testing.T, name string) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for _, n := range []int{len(buf), 4096, 1} {
		for {
			_, err := f.Write(buf[:n])
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
