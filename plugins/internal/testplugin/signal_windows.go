//go:build windows

package main

import "os"

// killSelf terminates the process at once, as a crashing plugin would.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
}

// freezeSelf does nothing: Windows has no SIGSTOP; the caller then blocks for ever, which a
// host sees the same way (no answer, no exit).
func freezeSelf() {}
