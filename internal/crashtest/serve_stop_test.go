//go:build unix

package crashtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestServeStopsCleanlyOnceItsSocketExists: a client that sees serve's socket may SIGTERM it at
// once, and serve must take that as the clean stop (exit 0), not die of the signal. Serve once
// caught the signal only after its last start-up step, so a SIGTERM in that window killed it.
// The test signals the moment the socket file appears (polling without sleeping) to land in
// that window as often as it can.
func TestServeStopsCleanlyOnceItsSocketExists(t *testing.T) {
	t.Parallel() // the test waits on its own processes most of its time
	if testing.Short() {
		t.Skip("crash test builds and runs real processes")
	}
	wend, _ := bins(t)
	for i := range 5 {
		db := filepath.Join(t.TempDir(), "wend.db")
		srv := startServe(t, wend, db, "")
		deadline := time.Now().Add(60 * time.Second)
		for {
			if _, err := os.Stat(db + ".sock"); err == nil {
				break
			}
			select {
			case <-srv.exited:
				t.Fatalf("serve %d exited before its socket existed: %v\n%s", i, srv.Wait(), srv.Stderr())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve %d: no socket after 60 s\n%s", i, srv.Stderr())
			}
		}
		_ = syscall.Kill(srv.Process.Pid, syscall.SIGTERM)
		if err := srv.Wait(); err != nil {
			t.Fatalf("serve %d: SIGTERM once its socket existed: %v\n%s", i, err, srv.Stderr())
		}
	}
}
