package commands

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// runInstead runs the program at path as a child with this process's console and returns its
// exit code: Windows has no exec. Ctrl-C reaches every process on the console, the child
// included, so this one only ignores it and waits for the child to stop as it chooses.
func runInstead(e *env, path string, args []string) int {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt)
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "wend %s: run %s: %v\n", args[0], path, err)
		return exitUsage
	}
	return exitOK
}
