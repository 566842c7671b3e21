package boltstore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// helperReader opens the database for reading only and holds it until stdin closes.
func helperReader(path string) error {
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		return err
	}
	fmt.Println("reading", os.Getpid())
	var b [1]byte
	os.Stdin.Read(b[:])
	return s.Close()
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	must(t, cmd.Run())
	return cmd.Process.Pid
}

// TestInUseByReader: a writer killed leaves its pid file behind; when a process that opened
// the database for reading holds it, a writer's Open names the reader's pid and says it reads,
// not the dead writer's pid.
func TestInUseByReader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the kernel names a lock's holders on Linux only")
	}
	path := filepath.Join(t.TempDir(), "wend.db")
	openAt(t, path, Options{}).Close()
	stale := deadPID(t)
	must(t, os.WriteFile(path+".pid", []byte(strconv.Itoa(stale)+"\n"), 0o600))

	cmd, stdin, pid := startHelper(t, "reader", path, "reading")

	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("open for writing beside a reader succeeded")
	}
	want := fmt.Sprintf("database %s is in use by another wend process (pid %d, which has it open for reading)", path, pid)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != pid || !iu.Reading || !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("open beside a reader, stale pid file of %d: %v\nwant it to say %q", stale, err, want)
	}
	stdin.Close()
	must(t, cmd.Wait())
}

// TestInUsePidFile: where the kernel names no holder, the writer's pid file names one only
// while that process lives; a dead writer's pid is never named.
func TestInUsePidFile(t *testing.T) {
	dead := deadPID(t)
	for _, c := range []struct {
		name    string
		pidFile string // "" for none
		pid     int
		reading bool
		msg     string
	}{
		{"live writer", strconv.Itoa(os.Getpid()), os.Getpid(), false, fmt.Sprintf("(pid %d)", os.Getpid())},
		{"dead writer", strconv.Itoa(dead), 0, true, "(a process that has it open for reading, pid unknown)"},
		{"no pid file", "", 0, true, "(a process that has it open for reading, pid unknown)"},
		{"garbage", "x\x00", 0, true, "(a process that has it open for reading, pid unknown)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wend.db") // no file: no lock the kernel could list
			if c.pidFile != "" {
				must(t, os.WriteFile(path+".pid", []byte(c.pidFile+"\n"), 0o600))
			}
			var iu *InUseError
			err := inUse(path)
			if !errors.As(err, &iu) || iu.PID != c.pid || iu.Reading != c.reading {
				t.Fatalf("inUse: %#v, want pid %d reading %v", err, c.pid, c.reading)
			}
			if want := "database " + path + " is in use by another wend process " + c.msg; err.Error() != want {
				t.Fatalf("message %q\nwant %q", err.Error(), want)
			}
		})
	}
}
