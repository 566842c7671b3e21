package boltstore

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// kills returns how many crashes a crash test runs: n by default, soakKills under -tags soak,
// or WEND_KILLS.
func kills(t *testing.T, n int) int {
	if v := os.Getenv("WEND_KILLS"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("WEND_KILLS=%q", v)
		}
		return k
	}
	if soak {
		return soakKills
	}
	return n
}

// seed returns WEND_SEED or a fresh seed; the figures line prints it so a failure can be rerun.
func seed(t *testing.T) uint64 {
	if v := os.Getenv("WEND_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("WEND_SEED=%q", v)
		}
		return s
	}
	return uint64(time.Now().UnixNano())
}

// keepOnFailure copies the database to $TMPDIR/runner-fail-<seed>/ if the test fails.
func keepOnFailure(t *testing.T, path string, seed uint64) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("runner-fail-%d", seed))
		os.MkdirAll(dir, 0o700)
		if b, err := os.ReadFile(path); err == nil {
			os.WriteFile(filepath.Join(dir, filepath.Base(path)), b, 0o600)
			t.Logf("database kept in %s", dir)
		}
	})
}

// TestKillWriter (docs/reliability.md A1): a writer process appending one event per commit is
// SIGKILLed at random times; after each kill the database opens, holds every acknowledged event,
// every event decodes with its checksum, and the history and bbolt checks pass.
func TestKillWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 0))
	path := filepath.Join(t.TempDir(), "wend.db")
	keepOnFailure(t, path, sd)
	n := kills(t, 20)
	var ackedMax, persistedMax uint64
	lost, checkErrors := 0, 0
	for i := range n {
		acked := killWriterOnce(t, path, time.Duration(rng.IntN(150_000))*time.Microsecond)
		ackedMax = max(ackedMax, acked)

		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", i, err)
		}
		r, err := s.Run("r1")
		if err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		evs, err := s.Events("r1", 0) // decodes every event, checksums included
		if err != nil {
			t.Errorf("kill %d: %v", i, err)
			checkErrors++
		}
		persisted := uint64(len(evs))
		persistedMax = max(persistedMax, persisted)
		if persisted < acked || r.LastSeq < acked {
			t.Errorf("kill %d: acknowledged seq %d, but %d events (record: %d) persisted", i, acked, persisted, r.LastSeq)
			lost += int(acked - min(persisted, acked))
		}
		ps, err := s.Check()
		must(t, err)
		for _, p := range ps {
			t.Errorf("kill %d: check: %s", i, p)
		}
		checkErrors += len(ps)
		must(t, s.Close())
	}
	fmt.Printf("RELIABILITY suite=boltstore-kill kills=%d acked_max=%d persisted_max=%d events_lost=%d check_errors=%d seed=%d\n",
		n, ackedMax, persistedMax, lost, checkErrors, sd)
}

// killWriterOnce runs the writer helper until delay after it is ready, SIGKILLs it, and
// returns the highest seq it acknowledged.
func killWriterOnce(t *testing.T, path string, delay time.Duration) uint64 {
	t.Helper()
	return killHelperOnce(t, "writer", "", path, delay)
}

// killHelperOnce is killWriterOnce for a writer helper of the given role and argument; a
// negative delay waits for the helper to end (it kills itself).
func killHelperOnce(t *testing.T, role, arg, path string, delay time.Duration) uint64 {
	t.Helper()
	cmd := helper(t, role, path, arg)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var (
		mu    sync.Mutex
		acked uint64
		ready = make(chan struct{})
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "ready "); ok {
				line = rest
				close(ready)
			}
			seq, err := strconv.ParseUint(line, 10, 64)
			if err != nil {
				continue
			}
			mu.Lock()
			acked = max(acked, seq)
			mu.Unlock()
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case <-ready:
	case <-done:
		cmd.Wait()
		t.Fatalf("writer exited before it was ready: %v", cmd.ProcessState)
	case <-time.After(30 * time.Second):
		t.Fatal("writer not ready after 30s")
	}
	if delay >= 0 {
		time.Sleep(delay)
		killGroup(cmd)
	}
	<-done // every line written before the kill is read: those are acknowledgements too
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	return acked
}

// TestKillCreate (docs/reliability.md A6): a process killed at each step of creating the
// database, and at random moments, leaves either no database or a valid one; the next Open works,
// checks clean, and removes the creation's temp file.
func TestKillCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	sd := seed(t)
	rng := rand.New(rand.NewPCG(sd, 1))
	points := []string{"temp created", "temp initialised", "linked", "folder synced"}
	for range kills(t, 6) {
		points = append(points, strconv.Itoa(rng.IntN(30_000))) // microseconds after start
	}
	fresh, valid, invalid := 0, 0, 0
	for _, at := range points {
		dir := t.TempDir()
		path := filepath.Join(dir, "wend.db")
		cmd := helper(t, "creator", path, at)
		err := cmd.Run()
		if _, statErr := os.Stat(path); statErr != nil {
			fresh++ // nothing there: the next Open creates it
		} else {
			valid++
		}
		if _, convErr := strconv.Atoi(at); convErr != nil && err == nil {
			t.Errorf("creator killed at %q exited cleanly", at)
		}
		s, err := Open(path, Options{})
		if err != nil {
			invalid++
			t.Errorf("after a kill at %q: %v", at, err)
			continue
		}
		if ps, err := s.Check(); err != nil || len(ps) > 0 {
			invalid++
			t.Errorf("after a kill at %q: check: %v %v", at, ps, err)
		}
		commitRun(t, s, startedRun("r"))
		must(t, s.Close())
		left, _ := filepath.Glob(filepath.Join(dir, "*"+creatingSuffix+"*"))
		if len(left) > 0 {
			t.Errorf("after a kill at %q: temp files left: %v", at, left)
		}
	}
	fmt.Printf("RELIABILITY suite=boltstore-create kills=%d fresh_creates=%d valid_opens=%d invalid_db=%d seed=%d\n",
		len(points), fresh, valid, invalid, sd)
}

func startedRun(id string) history.RunUpdate {
	return history.RunUpdate{
		Run:    history.Run{WorkflowID: "wf", RunID: id, Status: history.StatusRunning, StartedAt: t0, LastSeq: 1},
		Events: []history.Event{{Seq: 1, Type: history.WorkflowStarted, Time: t0}},
	}
}
