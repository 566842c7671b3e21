package commands

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/wendflow/wend/boltstore"
)

var compactCmd = &command{
	summary: "shrink the database file to its live data",
	usage: `Usage: wend compact [--db PATH]

Rewrites the database into a new file holding only its live data and renames that over it:
bbolt reuses the space of deleted runs but never gives it back, so a file from which many
runs were purged stays large until compacted. The database must not be in use: stop wend
serve (and any other wend process on it) first. The new file is built in PATH.compact.tmp
(it needs as much free disk as the live data), synced and checked before the rename, so a
failure or a crash leaves either the old database or the new one, each whole. Prints the
file's size before and after.

Flags:
  --db PATH   database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 compacted, 1 not compacted (in use, no database, an I/O error), 2 usage error.
`,
	run: runCompact,
}

func runCompact(e *env, args []string) int {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "compact", "%s", flagError(err))
	}
	if len(pos) > 0 {
		return usageError(e, "compact", "unexpected argument %q", pos[0])
	}
	path := dbPath(e, *db)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(e.stderr, "wend compact: no database at %s\n", path)
		return exitFailed
	}
	res, err := boltstore.Compact(path, boltstore.Options{})
	var inUse *boltstore.InUseError
	if errors.As(err, &inUse) {
		fmt.Fprintf(e.stderr, "wend compact: %v; compaction needs the file to itself: stop that process (wend serve) and run wend compact again\n", inUse)
		return exitFailed
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "wend compact: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "compacted %s: %s -> %s\n", path, byteSize(res.Before), byteSize(res.After))
	return exitOK
}
