//go:build !windows

package server

import (
	"errors"
	"syscall"
)

// refused reports a connection refused: a socket file no process listens on.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
