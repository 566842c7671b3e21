package commands

import (
	"errors"
	"fmt"
	"os"

	"github.com/wendflow/wend/boltstore"
)

// driveOrFollow runs a command that needs an engine to drive its run (wend run, wend wait,
// wend retry --follow) where that engine is: in the wend process holding the database,
// reached over its socket (remote, which then follows the run there), or else in an engine
// this process opens over the database and drives itself (local).
//
// missing, when not nil, is the command's error for a database that does not exist, so
// asking about runs never creates one; nil lets the driver create it (wend run).
func driveOrFollow(e *env, cmd, path string, missing error, remote func(*client) int, local func(*driver) int) int {
	return driveOrFollowWith(e, cmd, path, driverOptions{}, missing, remote, local)
}

// driveOrFollowWith is driveOrFollow with the options of an engine started here (a holder
// found keeps its own).
func driveOrFollowWith(e *env, cmd, path string, o driverOptions, missing error, remote func(*client) int, local func(*driver) int) int {
	if c := liveHolder(path); c != nil {
		defer c.Close()
		return remote(c)
	}
	if missing != nil {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return commandError(e, cmd, missing)
		}
	}
	d, err := startDriverWith(e, path, o)
	if errors.Is(err, boltstore.ErrInUse) {
		// A holder came up (or is still starting) since we looked: reach it as other
		// commands do. readRuns: a store opened here is refused below, so need no engine.
		b, err := openBackend(e, path, readRuns)
		if err != nil {
			fmt.Fprintf(e.stderr, "wend %s: %v\n", cmd, err)
			return exitUsage
		}
		defer b.Close()
		c, ok := b.(*client)
		if !ok {
			// The holder let go between our look and now; an engine opened here would only
			// park the run's activities, so start over rather than follow a run nobody drives.
			fmt.Fprintf(e.stderr, "wend %s: the wend process that held the database has just exited; run the command again\n", cmd)
			return exitUsage
		}
		return remote(c)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "wend %s: %v\n", cmd, err)
		return exitUsage
	}
	defer d.close()
	return local(d)
}
