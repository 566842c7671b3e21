package boltstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// helperEnv makes the test binary act as one of the subprocesses below instead of running tests;
// helperDB is the database it works on.
const (
	helperEnv = "WEND_BOLTSTORE_HELPER"
	helperDB  = "WEND_BOLTSTORE_DB"
	helperArg = "WEND_BOLTSTORE_ARG"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role, os.Getenv(helperDB), os.Getenv(helperArg)))
	}
	os.Exit(m.Run())
}

func runHelper(role, path, arg string) int {
	var err error
	switch role {
	case "writer":
		err = helperWriter(path, Options{})
	case "logwriter":
		err = helperLogWriter(path, arg)
	case "replayer":
		err = helperReplayer(path, arg)
	case "holder":
		err = helperHolder(path)
	case "reader":
		err = helperReader(path) // inuse_test.go
	case "keeper":
		err = helperKeeper(path, arg) // kept_test.go
	case "creator":
		err = helperCreator(path, arg)
	case "slowcreator":
		err = helperSlowCreator(path) // createrace_test.go
	case "racer":
		return helperRacer(path) // createrace_test.go
	case "backup", "compact": // backup_kill_test.go
		err = helperBackupCompact(role, path, arg)
	case "purger":
		err = helperPurger(path, arg) // purge_crash_test.go
	default:
		err = fmt.Errorf("unknown helper %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// helperWriter appends to run "r1" one event per Commit, for ever, printing each acknowledged
// seq on stdout. Each commit also replaces the run's task, and payload sizes vary so pages
// split and overflow.
func helperWriter(path string, opts Options) error {
	s, err := Open(path, opts)
	if err != nil {
		return err
	}
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	r, err := s.Run("r1")
	if err == nil {
		fmt.Fprintln(out, "ready", r.LastSeq)
	} else {
		u := storetest.Started("wf", "r1", t0)
		if err := s.Commit(ctx, history.Commit{Runs: []history.RunUpdate{u}}); err != nil {
			return err
		}
		r = u.Run
		fmt.Fprintln(out, "ready", 1)
	}
	out.Flush()
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), r.LastSeq))
	for {
		u := storetest.Next(r, history.ActivityCompleted, 1)
		u.Events[0].Data = payload(rng.IntN(3000))
		task := history.Task{ID: fmt.Sprintf("t%d", u.Run.LastSeq), RunID: "r1", Kind: history.TaskActivity, AvailableAt: t0}
		c := history.Commit{Runs: []history.RunUpdate{u}, PutTasks: []history.Task{task},
			DeleteTasks: []string{fmt.Sprintf("t%d", r.LastSeq)}}
		if err := s.Commit(ctx, c); err != nil {
			return err
		}
		r = u.Run
		fmt.Fprintln(out, r.LastSeq)
		out.Flush()
	}
}

// payload is a JSON string of about n bytes.
func payload(n int) []byte {
	b := make([]byte, 0, n+2)
	b = append(b, '"')
	for i := range n {
		b = append(b, 'a'+byte(i%26))
	}
	return append(b, '"')
}

// helperHolder opens the database, says so with its pid, and holds it until stdin closes.
func helperHolder(path string) error {
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	fmt.Println("holding", os.Getpid())
	var b [1]byte
	os.Stdin.Read(b[:])
	return s.Close()
}

// helperCreator creates the database and kills itself at the creation step arg ("" for none,
// a number for a delay in microseconds after which to die wherever it is).
func helperCreator(path, arg string) error {
	if us, err := strconv.Atoi(arg); err == nil {
		go func() {
			time.Sleep(time.Duration(us) * time.Microsecond)
			killSelf()
		}()
	} else if arg != "" {
		testHookCreate = func(step string) {
			if step == arg {
				killSelf()
			}
		}
	}
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	return s.Close()
}

// helper starts the test binary as a helper on path; the caller waits for or kills it.
func helper(t *testing.T, role, path, arg string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, helperDB+"="+path, helperArg+"="+arg)
	cmd.Stderr = os.Stderr
	// Own process group, killed at cleanup: no helper outlives the test.
	ownGroup(cmd)
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			killGroup(cmd)
			cmd.Wait()
		}
	})
	return cmd
}

// startHelper starts a helper process and waits for its first line, "WORD PID": the helper
// has done what role names (holds the lock, reads, creates) and goes on until its stdin closes.
func startHelper(t *testing.T, role, path, word string) (cmd *exec.Cmd, stdin io.WriteCloser, pid int) {
	t.Helper()
	cmd = helper(t, role, path, "")
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	must(t, err)
	if _, err := fmt.Sscanf(line, word+" %d", &pid); err != nil {
		t.Fatalf("%s said %q", role, line)
	}
	return cmd, stdin, pid
}
