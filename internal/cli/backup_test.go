package cli

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	c := &client{sock: sock, hc: &http.Client{Transport: server.UnixTransport(sock)}}
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
