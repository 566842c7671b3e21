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
// they are written, and returns the copy's path and the stamp of the file it read if the hash
// matches want. Running the copy closes the window in which the original could be swapped
// between check and exec.
func verifyCopy(src, dir, name, want string) (string, fileStamp, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fileStamp{}, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return "", fileStamp{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fileStamp{}, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fileStamp{}, err
	}
	out, err := os.CreateTemp(dir, name+"-*")
	if err != nil {
		return "", fileStamp{}, err
	}
	defer func() {
		if out != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		return "", fileStamp{}, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(want) {
		return "", fileStamp{}, &checksumError{path: src, want: want, got: got}
	}
	if err := out.Chmod(0o500); err != nil {
		return "", fileStamp{}, err
	}
	if err := out.Close(); err != nil {
		return "", fileStamp{}, err
	}
	path := out.Name()
	out = nil
	return path, stampOf(fi), nil
}

// verifyInPlace hashes a script that cannot be moved away from its neighbours and returns the
// stamp of the file it read.
func verifyInPlace(path, want string) (fileStamp, error) {
	got, st, err := hashFile(path)
	if err != nil {
		return fileStamp{}, err
	}
	if got != strings.ToLower(want) {
		return fileStamp{}, &checksumError{path: path, want: want, got: got}
	}
	return st, nil
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
