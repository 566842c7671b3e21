package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// helperBackupCompact is the "backup" and "compact" helpers. arg is the step of SaveBackup or
// Compact to die at (testHookBackup, testHookCompact), or a delay in microseconds after which
// to die wherever it is.
//
// backup: opens the database, prints "ready N", commits runs load<N+1>, load<N+2>, ... in the
// background, printing each number once acknowledged, and backs up to path+".backup" meanwhile,
// then goes on committing until killed. compact: compacts the database.
func helperBackupCompact(role, path, arg string) error {
	step := arg
	arm := func() {} // after "ready": the test waits for it
	if us, err := strconv.Atoi(arg); err == nil {
		step = ""
		arm = func() {
			go func() {
				time.Sleep(time.Duration(us) * time.Microsecond)
				killSelf()
			}()
		}
	}
	hook := func(s string) {
		if s == step {
			killSelf()
		}
	}
	if role == "compact" {
		testHookCompact = hook
		fmt.Println("ready 0")
		arm()
		if _, err := Compact(path, Options{}); err != nil {
			return err
		}
	} else {
		testHookBackup = hook
		if err := backupUnderLoad(path, arm); err != nil {
			return err
		}
	}
	if step != "" {
		return fmt.Errorf("step %q never reached", step)
	}
	select {} // until the delay's kill
}

func backupUnderLoad(path string, arm func()) error {
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	runs, err := s.Runs(history.RunFilter{})
	if err != nil {
		return err
	}
	fmt.Println("ready", len(runs))
	arm()
	go func() {
		for n := len(runs) + 1; ; n++ {
			id := fmt.Sprintf("load%d", n)
			c := history.Commit{Runs: []history.RunUpdate{storetest.Started("wf-"+id, id, t0)}}
			if err := s.Commit(context.Background(), c); err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				os.Exit(1)
			}
			fmt.Println(n)
		}
	}()
	_, err = SaveBackup(path+".backup", true, func(w io.Writer) (int64, error) { return s.WriteBackup(w, nil) })
	return err
}

// killPoints are the steps to kill at, then n random delays up to maxDelay.
func killPoints(rng *rand.Rand, steps []string, n int, maxDelay time.Duration) []string {
	points := append([]string(nil), steps...)
	for range n {
		points = append(points, strconv.Itoa(rng.IntN(int(maxDelay/time.Microsecond))))
	}
	return points
}

// openClean opens path, checks it clean and returns it (closed at cleanup).
func openClean(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s := openAt(t, path, opts)
	checkClean(t, s)
	return s
}

// TestKillBackup (docs/reliability.md): a process backing up while it commits runs is killed
// before its copy is renamed, after, and at random moments. The source then opens, checks
// clean and holds every acknowledged run; the target is the previous backup until the rename
// and the new one after, and opens and checks clean without a log either way.
func TestKillBackup(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 2))
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	dst := path + ".backup"
	keepOnFailure(t, path, sd)
	s := openAt(t, path, Options{})
	seeds := commitRuns(t, s, "seed", 100, 4, 2000)
	_, err := SaveBackup(dst, false, func(w io.Writer) (int64, error) { return s.WriteBackup(w, nil) })
	must(t, err)
	must(t, s.Close())

	points := killPoints(rng, []string{"written", "closed", "renamed"}, kills(t, 3), 40*time.Millisecond)
	kept, replaced, base := 0, 0, uint64(len(seeds)) // base: the runs before the helper; it prints "ready base"
	for _, at := range points {
		before, err := os.ReadFile(dst)
		must(t, err)
		acked := killHelperOnce(t, "backup", at, path, -1)
		src := openClean(t, path, Options{})
		for n := base + 1; n <= acked; n++ {
			if _, err := src.Run(fmt.Sprintf("load%d", n)); err != nil {
				t.Errorf("kill at %q: acknowledged run load%d lost: %v", at, n, err)
			}
		}
		after, err := os.ReadFile(dst)
		must(t, err)
		same := bytes.Equal(before, after)
		if same {
			kept++
		} else {
			replaced++
		}
		switch {
		case (at == "written" || at == "closed") && !same:
			t.Errorf("kill at %q: the backup target was replaced before the rename", at)
		case at == "renamed" && same:
			t.Errorf("kill at %q: the backup target is still the old one", at)
		}
		b := openClean(t, dst, Options{NoLog: true})
		sameRuns(t, src, b, seeds)
		runs, err := src.Runs(history.RunFilter{})
		must(t, err)
		base = uint64(len(runs))
		must(t, b.Close())
		must(t, src.Close())
	}
	fmt.Printf("RELIABILITY suite=boltstore-backup kills=%d target_kept=%d target_replaced=%d seed=%d\n",
		len(points), kept, replaced, sd)
}

// TestKillCompact (docs/reliability.md): a compaction is killed after its file is built,
// after the rename, and at random moments, each time over a log a killed writer left. The
// database then opens, checks clean and holds every run as before and every acknowledged
// event; the compaction's temp file is gone after that Open.
func TestKillCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 3))
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	ref := filepath.Join(dir, "ref.db")
	keepOnFailure(t, path, sd)
	s := openAt(t, path, Options{})
	seeds := commitRuns(t, s, "seed", 100, 4, 2000)
	must(t, s.Close())
	withFreedPages(t, path, 4<<20)
	r := openAt(t, path, Options{})
	_, err := SaveBackup(ref, false, func(w io.Writer) (int64, error) { return r.WriteBackup(w, nil) })
	must(t, err)
	must(t, r.Close())
	refStore := openAt(t, ref, Options{})

	points := killPoints(rng, []string{"built", "renamed"}, kills(t, 3), 60*time.Millisecond)
	for _, at := range points {
		acked := killWriterOnce(t, path, time.Duration(rng.IntN(50))*time.Millisecond)
		killHelperOnce(t, "compact", at, path, -1)
		c := openClean(t, path, Options{})
		if _, err := os.Stat(path + compactSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("kill at %q: %s left after Open: %v", at, compactSuffix, err)
		}
		sameRuns(t, refStore, c, seeds)
		if r, err := c.Run("r1"); err != nil || r.LastSeq < acked {
			t.Errorf("kill at %q: run r1 at seq %d (%v), %d acknowledged", at, r.LastSeq, err, acked)
		}
		must(t, c.Close())
	}
	fmt.Printf("RELIABILITY suite=boltstore-compact kills=%d seed=%d\n", len(points), sd)
}
