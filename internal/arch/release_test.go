package arch

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseRefusesUnpinnedSDK runs scripts/release on a tagged tree whose go.mod is each of
// the cases below: a release whose go.mod still replaces the plugin SDK module (which
// `go install ...@version` refuses) or pins another SDK version than the tag is refused before
// anything is built; the pinned one gets past those checks to the next (the other SDKs'
// versions, absent from this tree).
func TestReleaseRefusesUnpinnedSDK(t *testing.T) {
	script, err := os.ReadFile("../../scripts/release")
	if err != nil {
		t.Fatal(err)
	}
	const sdk = "github.com/wendflow/wend/sdk/go"
	for _, c := range []struct {
		name, gomod, stderr string
	}{
		{"replace left", "require " + sdk + " v0.0.0\nreplace " + sdk + " => ./sdk/go\n",
			"go.mod has a replace or exclude, which go install refuses"},
		{"other version pinned", "require " + sdk + " v1.2.2\n",
			"go.mod does not require " + sdk + " v1.2.3; tag sdk/go/v1.2.3 and pin it"},
		{"exclude left", "require " + sdk + " v1.2.3\nexclude example.com/m v1.0.0\n",
			"go.mod has a replace or exclude"},
		{"not required", "",
			"go.mod does not require " + sdk + " v1.2.3"},
		{"pinned", "require " + sdk + " v1.2.3\n",
			"sdk/python/pyproject.toml does not carry version 1.2.3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "scripts/release"), string(script), 0o755)
			write(t, filepath.Join(dir, "go.mod"), "module github.com/wendflow/wend\n\ngo 1.26.0\n\n"+c.gomod, 0o644)
			git(t, dir, "init", "-q")
			git(t, dir, "add", ".")
			git(t, dir, "commit", "-q", "-m", "release")
			git(t, dir, "tag", "v1.2.3")

			cmd := exec.Command("scripts/release", "--targets", "linux/amd64")
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("scripts/release: %v, want exit 2\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("scripts/release said\n%s\nwant it to say %q", stderr.String(), c.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "dist")); err == nil {
				t.Error("scripts/release refused the release but made dist/")
			}
		})
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=wend", "-c", "user.email=wend@example.invalid",
		"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
