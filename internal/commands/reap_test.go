package commands

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/app"
)

// A corrupt plugin registry beside the database is a warning: the driver starts, and the
// registry is dropped (docs/reliability.md P8; the reaping itself is tested in plugins and
// crashtest).
func TestCorruptPluginRegistry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wend.db")
	if err := os.WriteFile(app.PluginRegistry(path), []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	e := &env{stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
	d, err := startDriver(e, path)
	if err != nil {
		t.Fatal(err)
	}
	d.close()
	want := "wend: warning: dropped 1 unreadable line(s) of plugin registry " + app.PluginRegistry(path)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant %q", stderr.String(), want)
	}
	if _, err := os.Stat(app.PluginRegistry(path)); !os.IsNotExist(err) {
		t.Errorf("corrupt registry still there: %v", err)
	}
}
