package commands

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/boltstore"
	"github.com/wendflow/wend/server"
)

// TestBackupCutShort: a copy the holder stops sending midway (it failed, or was killed) is an
// error, and the target is not written.
func TestBackupCutShort(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	u, err := server.ListenUnix(sock, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write(make([]byte, 4096))
		panic(http.ErrAbortHandler)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	c := newClient(sock, 0)
	dst := filepath.Join(dir, "copy.db")
	_, err = boltstore.SaveBackup(dst, false, c.Backup)
	if err == nil || !strings.Contains(err.Error(), "receive the copy") {
		t.Fatalf("a copy cut short: %v", err)
	}
	for _, p := range []string{dst, dst + ".tmp"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after a failed backup: %v", p, err)
		}
	}
}

// lockedBuffer is a strings.Builder safe for a writer goroutine and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBackupProgress: a copy that takes a while reports the bytes written so far on stderr.
func TestBackupProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 5 * time.Millisecond
	var stderr lockedBuffer
	p := &copyProgress{stderr: &stderr, start: time.Now()}
	stop := p.report()
	w := &countingWriter{w: io.Discard, p: p}
	w.Write(make([]byte, 3<<20))
	line := regexp.MustCompile(`(?m)^wend backup: 3\.0 MiB written \(\d+s\)$`)
	for i := 0; i < 1000 && !line.MatchString(stderr.String()); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if !line.MatchString(stderr.String()) {
		t.Fatalf("progress: %q", stderr.String())
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1.0 KiB", 16 << 20: "16.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestBackupIntoMissingFolder: a FILE whose folder does not exist (or is a file) is an I/O
// error of the command line, exit 2, before any database is opened.
func TestBackupIntoMissingFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{filepath.Join(dir, "nodir", "copy.db"), filepath.Join(file, "copy.db")} {
		var out, errs strings.Builder
		e := &env{stdout: &out, stderr: &errs, getenv: func(string) string { return "" }}
		if code := run(e, []string{"backup", "--db", filepath.Join(dir, "db", "wend.db"), dst}); code != exitUsage {
			t.Errorf("backup to %s: exit %d, want %d (stderr %q)", dst, code, exitUsage, errs.String())
		}
		if !strings.Contains(errs.String(), "does not exist or is not a folder; create it or give another path") {
			t.Errorf("backup to %s: stderr %q", dst, errs.String())
		}
	}
}
