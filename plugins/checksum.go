package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// verifyCopy copies the binary at src into dir (private to this user), hashing the bytes as
// they are written, and returns the copy's path if the hash matches want. Running the copy
// closes the window in which the original could be swapped between check and exec.
func verifyCopy(src, dir, name, want string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	out, err := os.CreateTemp(dir, name+"-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if out != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		return "", err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(want) {
		return "", &checksumError{path: src, want: want, got: got}
	}
	if err := out.Chmod(0o500); err != nil {
		return "", err
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	path := out.Name()
	out = nil
	return path, nil
}

// verifyInPlace hashes a script that cannot be moved away from its neighbours.
func verifyInPlace(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(want) {
		return &checksumError{path: path, want: want, got: got}
	}
	return nil
}

type checksumError struct{ path, want, got string }

func (e *checksumError) Error() string {
	return fmt.Sprintf("sha256 of %s is %s, want %s", e.path, e.got, strings.ToLower(e.want))
}

// pinnedScript returns the index in args (after the interpreter) of the file SHA256 pins.
func pinnedScript(dir string, args []string) int {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if st, err := os.Stat(resolve(dir, a)); err == nil && st.Mode().IsRegular() {
			return i
		}
	}
	return -1
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
