package boltstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecondProcess (docs/reliability.md A7): while another process holds the database, Open fails
// within the lock timeout plus a second, naming that process's pid; after it closes, Open works
// and the pid file is gone.
func TestSecondProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	cmd, stdin, pid := startHelper(t, "holder", path, "holding")

	start := time.Now()
	s, err := Open(path, Options{})
	waited := time.Since(start)
	if err == nil {
		s.Close()
		t.Fatal("second open succeeded")
	}
	want := fmt.Sprintf("database %s is in use by another wend process (pid %d)", path, pid)
	if !strings.Contains(err.Error(), want) || !errors.Is(err, ErrInUse) {
		t.Fatalf("second open: %v\nwant it to say %q", err, want)
	}
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != pid {
		t.Fatalf("second open: %#v", err)
	}
	if waited > 2*time.Second {
		t.Fatalf("second open took %v, want < 2s", waited)
	}
	fmt.Printf("RELIABILITY suite=boltstore-lock lock_wait_ms=%d pid_named=1\n", waited.Milliseconds())

	stdin.Close()
	must(t, cmd.Wait())
	if _, err := os.Stat(path + ".pid"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pid file left after close: %v", err)
	}
	openAt(t, path, Options{}) // a second open writes its own pid
	b, err := os.ReadFile(path + ".pid")
	must(t, err)
	if strings.TrimSpace(string(b)) != fmt.Sprint(os.Getpid()) {
		t.Fatalf("pid file says %q, want %d", b, os.Getpid())
	}
}
