//go:build unix

package main

import (
	"os"
	"syscall"
)

// killSelf dies by SIGKILL, as a crashing plugin would.
func killSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// freezeSelf stops the process (SIGSTOP): it neither answers nor exits.
func freezeSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
