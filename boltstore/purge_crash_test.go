package boltstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// purgeCrashRuns is how many closed runs the kill test's store holds: three batches and a bit.
const purgeCrashRuns = 3*PurgeBatch + 5

// TestKillPurge kills a process purging every closed run while it commits to an open one, at
// the commit of a purge batch and at random: after it, each closed run is whole or gone, the
// runs gone are whole batches and include every batch the purge acknowledged, no acknowledged
// commit of the open run is lost, and the store checks clean (docs/reliability.md A19).
func TestKillPurge(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 2))
	points := []string{"commit:1", "commit:2", "commit:3"}
	for range kills(t, 4) {
		points = append(points, strconv.Itoa(rng.IntN(300_000))) // microseconds after the purge starts
	}
	for _, at := range points {
		t.Run(at, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wend.db")
			s := openAt(t, path, Options{})
			ids := loadClosedRuns(t, s, purgeCrashRuns)
			commitRun(t, s, storetest.Started("wf-open", "open", t0))
			must(t, s.Close())

			cmd := helper(t, "purger", path, at)
			out, err := cmd.StdoutPipe()
			must(t, err)
			must(t, cmd.Start())
			var seq uint64
			acked := 0
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) != 2 {
					continue
				}
				n, _ := strconv.Atoi(f[1])
				switch f[0] {
				case "seq":
					seq = max(seq, uint64(n))
				case "purged":
					acked = max(acked, n)
				}
			}
			_ = cmd.Wait()
			keepOnFailure(t, path, sd)

			s = openAt(t, path, Options{})
			if r, err := s.Run("open"); err != nil || r.LastSeq < seq {
				t.Errorf("open run: last seq %d (%v), %d acknowledged", r.LastSeq, err, seq)
			}
			gone := 0
			for i, id := range ids {
				evs, err := s.Events(id, 0)
				switch {
				case errors.Is(err, history.ErrNotFound):
					gone++
					if gone != i+1 {
						t.Errorf("run %s gone after a run kept: not in purge order", id)
					}
				case err != nil:
					t.Errorf("run %s: %v", id, err)
				case len(evs) != 4:
					t.Errorf("run %s: %d events, want 4", id, len(evs))
				case i < acked:
					t.Errorf("run %s: purged (acknowledged) but still there", id)
				}
			}
			if gone < acked || (gone%PurgeBatch != 0 && gone != len(ids)) {
				t.Errorf("%d runs gone, %d acknowledged purged: not whole batches of %d", gone, acked, PurgeBatch)
			}
			problems, err := s.Check()
			must(t, err)
			if len(problems) > 0 {
				t.Errorf("check: %q", problems)
			}
			t.Logf("killed at %s: %d of %d runs gone, %d acknowledged; open run at seq %d", at, gone, len(ids), acked, seq)
		})
	}
}

// helperPurger purges every closed run of the store, printing "purged N" after each batch,
// while a goroutine commits to run "open", printing "seq N" for each acknowledged commit. arg
// "commit:K" kills it at the K-th batch's commit; a number, that many microseconds after the
// purge starts.
func helperPurger(path, arg string) error {
	purgeSlice = time.Hour // batches of PurgeBatch runs, which the test checks whole
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	out := make(chan string, 1024)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		w := bufio.NewWriter(os.Stdout)
		for line := range out {
			fmt.Fprintln(w, line)
			w.Flush()
		}
	}()
	if k, ok := strings.CutPrefix(arg, "commit:"); ok {
		at, _ := strconv.Atoi(k)
		n := 0
		testHookPurge = func(string) {
			if n++; n == at {
				killSelf()
			}
		}
	} else if us, err := strconv.Atoi(arg); err == nil {
		go func() {
			time.Sleep(time.Duration(us) * time.Microsecond)
			killSelf()
		}()
	}
	r, err := s.Run("open")
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	committed := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				committed <- nil
				return
			default:
			}
			u := storetest.Next(r, history.ActivityCompleted, 1)
			if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
				committed <- err
				return
			}
			r = u.Run
			out <- fmt.Sprint("seq ", r.LastSeq)
		}
	}()
	runs, err := s.PurgeCandidates(func(history.Run) bool { return true })
	if err != nil {
		return err
	}
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = run.RunID
	}
	_, err = s.PurgeRuns(context.Background(), ids, func(n int) { out <- fmt.Sprint("purged ", n) })
	close(stop)
	if cerr := <-committed; err == nil {
		err = cerr
	}
	close(out)
	<-printed
	if err != nil {
		return err
	}
	return s.Close()
}
