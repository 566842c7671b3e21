//go:build unix

package crashtest

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitSocketNamesAServeThatExitedBeforeListening: a serve that dies before it listens,
// beside the socket file a SIGKILLed predecessor left, must fail the wait with its exit code
// and stderr, not a deadline's "connection refused" (the TestCompensationsAcrossKills flake
// reported only that, after 60 s).
func TestWaitSocketNamesAServeThatExitedBeforeListening(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wend.db")
	// A stale socket: bound, then closed without removing the file, as a SIGKILL leaves it.
	ln, err := net.Listen("unix", db+".sock")
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	// A usage error: serve exits 2 before it opens the database, let alone listens.
	srv := startServe(t, wend, db, "", "--idle-after", "-1s")
	err = socketAnswer(srv, db+".sock", 10*time.Minute) // far past any loaded machine's start
	if err == nil {
		t.Fatal("a serve that exited answered on the socket")
	}
	for _, want := range []string{"exited 2 before it answered", "--idle-after -1s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
