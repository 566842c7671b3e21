package boltstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

// Exit codes of the racer helper.
const (
	racerOpened = 0
	racerInUse  = 3 // Open failed with ErrInUse, naming a pid
	racerFailed = 1 // any other failure
)

// helperRacer opens the database (creating it when missing), commits a run of its own and
// closes it; or says why it could not.
func helperRacer(path string) int {
	s, err := Open(path, Options{})
	var iu *InUseError
	switch {
	case errors.As(err, &iu) && iu.PID > 0:
		fmt.Println("in use by", iu.PID)
		return racerInUse
	case err != nil:
		fmt.Fprintln(os.Stderr, "racer:", err)
		return racerFailed
	}
	id := fmt.Sprintf("r%d", os.Getpid())
	u := storetest.Started(id, id, t0)
	if err := s.Commit(context.Background(), history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
		fmt.Fprintln(os.Stderr, "racer: commit:", err)
		s.Close()
		return racerFailed
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "racer: close:", err)
		return racerFailed
	}
	fmt.Println("opened", id)
	return racerOpened
}

// TestCreateRace: processes that open one database path at once, none of them finding a file
// there, all end well: each either opens the database (one of them creating it) and commits,
// or is told it is in use by another process's pid; none fails otherwise (a half-made file
// of another deleted under it), and the database then holds every run committed, checks
// clean, and no creation's temp file is left. WEND_TEST_ALL=1 runs it 100 times, else 8.
func TestCreateRace(t *testing.T) {
	if testing.Short() {
		t.Skip("races real processes")
	}
	rounds, procs := 8, 6
	if os.Getenv("WEND_TEST_ALL") == "1" {
		rounds = 100
	}
	opened, inUse := 0, 0
	for round := range rounds {
		dir := t.TempDir()
		path := filepath.Join(dir, "sub", "wend.db")
		var wg sync.WaitGroup
		type result struct {
			code int
			out  string
		}
		results := make([]result, procs)
		cmds := make([]*exec.Cmd, procs)
		for i := range procs {
			cmds[i] = helper(t, "racer", path, "")
			cmds[i].Stderr = nil
		}
		for i, cmd := range cmds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := cmd.CombinedOutput()
				results[i] = result{exitCode(err), string(out)}
			}()
		}
		wg.Wait()
		var ids []string
		for i, r := range results {
			switch r.code {
			case racerOpened:
				opened++
				ids = append(ids, strings.TrimSpace(strings.TrimPrefix(r.out, "opened")))
			case racerInUse:
				inUse++
			default:
				t.Errorf("round %d: process %d exited %d: %s", round, i, r.code, r.out)
			}
		}
		if len(ids) == 0 {
			t.Errorf("round %d: no process opened the database", round)
		}
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: open after the race: %v", round, err)
		}
		for _, id := range ids {
			if _, err := s.Run(id); err != nil {
				t.Errorf("round %d: run %s committed by a racer: %v", round, id, err)
			}
		}
		if ps, err := s.Check(); err != nil || len(ps) > 0 {
			t.Errorf("round %d: check: %q %v", round, ps, err)
		}
		must(t, s.Close())
		if left, _ := filepath.Glob(filepath.Join(dir, "sub", "*"+creatingSuffix+"*")); len(left) > 0 {
			t.Errorf("round %d: temp files left: %v", round, left)
		}
	}
	t.Logf("%d rounds of %d processes: %d opened, %d told the database is in use", rounds, procs, opened, inUse)
}

// helperSlowCreator creates the database and stops half-way, its temp file made and not yet
// linked, saying so with its pid, until stdin closes.
func helperSlowCreator(path string) error {
	testHookCreate = func(step string) {
		if step == "temp initialised" {
			fmt.Println("creating", os.Getpid())
			var b [1]byte
			os.Stdin.Read(b[:])
		}
	}
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	return s.Close()
}

// TestCreationInUse: while another process is creating the database (its temp file made, not
// yet in place), Open waits for it and, when it does not finish, fails naming its pid,
// deleting nothing of it; the creator then finishes, and its database opens.
func TestCreationInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	defer func(d time.Duration) { creationLockWait = d }(creationLockWait)
	creationLockWait = 200 * time.Millisecond
	dir := t.TempDir()
	path := filepath.Join(dir, "wend.db")
	cmd, stdin, pid := startHelper(t, "slowcreator", path, "creating")
	temps, _ := filepath.Glob(filepath.Join(dir, "*"+creatingSuffix+"*"))
	if len(temps) != 1 {
		t.Fatalf("the creator's temp files: %v, want one", temps)
	}

	_, err := Open(path, Options{})
	want := fmt.Sprintf("database %s is in use by another wend process (pid %d)", path, pid)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != pid || !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("open while another process creates the database: %v\nwant it to say %q", err, want)
	}
	if _, err := os.Stat(temps[0]); err != nil {
		t.Fatalf("the creator's temp file after another open: %v", err)
	}
	stdin.Close()
	must(t, cmd.Wait())
	s := openAt(t, path, Options{})
	if ps, err := s.Check(); err != nil || len(ps) > 0 {
		t.Fatalf("check of the database the creator made: %q %v", ps, err)
	}
}
