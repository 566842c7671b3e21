//go:build unix

package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO where --against expects a database or an export never blocks validate: named in a
// folder of exports it is passed over, named itself it is refused as not a regular file.
// Opening a FIFO for reading waits for a writer, so a check that opened it would hang here.
func TestValidateAgainstFIFO(t *testing.T) {
	dir := t.TempDir()
	exports := filepath.Join(dir, "exports")
	if err := os.Mkdir(exports, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(exports, "trap.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	file := filepath.Join(dir, "w.wend.yaml")
	if err := os.WriteFile(file, []byte(againstBase), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		against  string
		code     int
		inStderr string
	}{
		{exports, exitOK, "no open run of these workflows"},
		{fifo, exitUsage, "is a named pipe (FIFO), not a regular file"},
	} {
		var stdout, stderr bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- runValidate(&env{stdout: &stdout, stderr: &stderr}, []string{"--against", tc.against, file})
		}()
		select {
		case code := <-done:
			if code != tc.code || !strings.Contains(stderr.String(), tc.inStderr) {
				t.Errorf("--against %s: exit %d, stderr %q; want exit %d saying %q", tc.against, code, stderr.String(), tc.code, tc.inStderr)
			}
		case <-time.After(time.Minute):
			t.Fatalf("--against %s: validate still blocked after a minute", tc.against)
		}
	}
}
