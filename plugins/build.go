package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A build is the code one plugin process runs, named by the sha256 of the file that holds it:
// the program when the command names it by path or PATH, else the script an interpreter runs
// (the first argument naming an existing file, as Config.SHA256 pins). Each try reports the
// build that served it, and the host rolls to a new process when the file changes.
type build struct {
	path   string    // the watched file
	stamp  fileStamp // what fstat said of the bytes that were hashed
	sha256 string    // hex, lower case
}

// fileStamp is what stat says about a file's identity and content: replacing the file
// (rename) changes the inode, rewriting it changes the size or the times. Where the OS gives
// no inode or change time (Windows) they stay zero: see sysStamp. Comparing stamps
// costs one stat per try; the file is hashed again only when its stamp changed.
type fileStamp struct {
	//lint:ignore U1000 zero where the OS's stat lacks them (stamp_fileinfo.go)
	dev, ino uint64
	size     int64
	//lint:ignore U1000 ctime zero where the OS's stat lacks it (stamp_fileinfo.go)
	mtime, ctime int64 // nanoseconds
}

// stampOf is the stamp of fi: size and modification time on every OS, plus what the OS's
// stat adds (sysStamp, one file per OS).
func stampOf(fi os.FileInfo) fileStamp {
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	sysStamp(fi, &s)
	return s
}

// hashFile returns the sha256 of the file at path and the stamp of the very file it read
// (fstat of the open file, so a rename between stat and read cannot pair one file's stamp
// with another's hash).
func hashFile(path string) (string, fileStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fileStamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fileStamp{}, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fileStamp{}, err
	}
	return hex.EncodeToString(h.Sum(nil)), stampOf(fi), nil
}

// watched returns the file whose bytes are cfg's build, given the resolved program.
func watched(cfg Config, program string) string {
	if strings.ContainsRune(cfg.Command[0], filepath.Separator) {
		return program
	}
	if i := pinnedScript(cfg.Dir, cfg.Command[1:]); i >= 0 {
		return resolve(cfg.Dir, cfg.Command[1+i])
	}
	return program // a program found in PATH, run without a script
}

// changed reports whether the watched file now holds other bytes than b. A file that cannot
// be read (removed mid-deploy, say) is not a change: the running build goes on serving until
// a readable file differs. An unchanged hash under a new stamp (touched, or copied back)
// updates the stamp, so the next check is a stat again.
func (b *build) changed() bool {
	st, err := statStamp(b.path)
	if err != nil || st == b.stamp {
		return false
	}
	sum, st, err := hashFile(b.path)
	if err != nil {
		return false
	}
	if sum == b.sha256 {
		b.stamp = st
		return false
	}
	return true
}
