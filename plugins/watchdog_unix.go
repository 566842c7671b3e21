//go:build unix && (!linux || wend_portable)

package plugins

import (
	"io"
	"os"
	"os/signal"
	"syscall"
)

// watchdogEnv makes any program that links this package a plugin watchdog (runner_unix.go)
// instead of itself: the host starts its own executable with it, so wend, wend-temporal and
// test binaries need no subcommand of their own.
const watchdogEnv = "WEND_PLUGIN_WATCHDOG"

func init() {
	if os.Getenv(watchdogEnv) != "" {
		watchdog()
	}
}

// watchdog waits for the host's lifeline pipe (its stdin) to end, then SIGKILLs its own
// process group: the plugin's, which it joined at start. Terminal and stray termination
// signals are ignored so only the host's death or a deliberate SIGKILL ends it.
func watchdog() {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGPIPE)
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = syscall.Kill(0, syscall.SIGKILL)
	os.Exit(1) // unreachable unless the kill failed
}
