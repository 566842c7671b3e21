package commands

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/wendflow/wend/boltstore"
)

var backupCmd = &command{
	summary: "write a consistent copy of the database",
	usage: `Usage: wend backup FILE [--force] [--db PATH]

Writes a consistent copy of the database to FILE: every run and event acknowledged before
the backup began, as a plain wend database that 'wend list/show/check --db FILE' open
(no log folder needed). Runs go on meanwhile. When another wend process (wend serve) holds
the database, the copy comes through its control socket; otherwise wend opens the
database itself. The copy is written to FILE.tmp, synced, checked to read back whole and
renamed to FILE, so a failure or a crash never leaves a partial FILE. For a large file,
the bytes written so far are reported on stderr every few seconds.

Flags:
  --force     replace FILE if it exists (without it, an existing FILE is refused)
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 backup written, 1 the backup failed (FILE is as it was), 2 usage or I/O error
(FILE's folder does not exist).
`,
	run: runBackup,
}

// progressEvery is how often a long copy reports the bytes written; a variable for tests.
var progressEvery = 2 * time.Second

func runBackup(e *env, args []string) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	force := fs.Bool("force", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "backup", "%s", flagError(err))
	}
	switch {
	case len(pos) == 0:
		return usageError(e, "backup", "missing FILE, the backup's path")
	case len(pos) > 1:
		return usageError(e, "backup", "unexpected argument %q", pos[1])
	}
	src := dbPath(e, *db)
	dst, err := filepath.Abs(pos[0])
	if err != nil {
		dst = pos[0]
	}
	if sameOrBeside(src, dst) {
		return usageError(e, "backup", "FILE %s is the database itself or one of its files; give another path", dst)
	}
	if dir := filepath.Dir(dst); !isDir(dir) {
		// Nothing to copy to: the path is wrong, not the backup (exit 2, as for usage).
		fmt.Fprintf(e.stderr, "wend backup: FILE's folder %s does not exist or is not a folder; create it or give another path\n", dir)
		return exitUsage
	}
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(e.stderr, "wend backup: no database at %s\n", src)
		return exitFailed
	}
	p := &copyProgress{stderr: e.stderr, start: time.Now()}
	stop := p.report()
	n, err := boltstore.SaveBackup(dst, *force, func(w io.Writer) (int64, error) {
		return backupFrom(src, &countingWriter{w: w, p: p})
	})
	stop()
	if err != nil {
		fmt.Fprintf(e.stderr, "wend backup: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "backup of %s written to %s (%s)\n", src, dst, byteSize(n))
	return exitOK
}

// isDir reports whether path is a folder (following links).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// sameOrBeside reports whether dst is the database file or one of the files wend keeps beside
// it (log folder, pid file, socket): a backup must never replace those.
func sameOrBeside(src, dst string) bool {
	for _, suffix := range []string{"", ".wal", ".pid", ".sock"} {
		if dst == src+suffix {
			return true
		}
	}
	a, errA := os.Stat(src)
	b, errB := os.Stat(dst)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

// backupFrom writes the database's copy to w: through the control socket of the process that
// holds it, or from the file, opened here.
func backupFrom(path string, w io.Writer) (int64, error) {
	if c := liveHolder(path); c != nil {
		defer c.Close()
		return c.Backup(w)
	}
	st, err := openStore(path)
	var inUse *boltstore.InUseError
	if errors.As(err, &inUse) {
		c, cerr := dialControl(path, inUse.PID)
		if cerr != nil {
			return 0, fmt.Errorf("%w, and its control socket %s does not answer (%v)", err, socketPath(path), cerr)
		}
		defer c.Close()
		return c.Backup(w)
	}
	if err != nil {
		return 0, err
	}
	n, err := st.WriteBackup(w, nil)
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return n, err
}

// copyProgress reports a long copy's bytes written on stderr, every progressEvery.
type copyProgress struct {
	stderr io.Writer
	start  time.Time
	n      atomic.Int64
}

// report starts the reports; the returned func stops them.
func (p *copyProgress) report() func() {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(p.stderr, "wend backup: %s written (%s)\n", byteSize(p.n.Load()), time.Since(p.start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-exited }
}

type countingWriter struct {
	w io.Writer
	p *copyProgress
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.p.n.Add(int64(n))
	return n, err
}

// byteSize is n in the largest binary unit that keeps it at least 1, with one decimal.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	f, u := float64(n), 0
	for f >= unit && u < 4 {
		f /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGT"[u-1])
}
