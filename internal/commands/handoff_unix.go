//go:build unix

package commands

import (
	"fmt"
	"os"
	"syscall"
)

// runInstead replaces this process with the program at path: its pid, signals and exit code
// are the user's. It returns only on failure.
func runInstead(e *env, path string, args []string) int {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	fmt.Fprintf(e.stderr, "wend %s: run %s: %v\n", args[0], path, err)
	return exitUsage
}
