package server

import (
	"errors"
	"syscall"
)

// wsaeConnRefused is Winsock's WSAECONNREFUSED, what a dial of an AF_UNIX socket file no
// process listens on returns on Windows (syscall.ECONNREFUSED is another number there).
const wsaeConnRefused = syscall.Errno(10061)

// refused reports a connection refused: a socket file no process listens on.
func refused(err error) bool {
	return errors.Is(err, wsaeConnRefused) || errors.Is(err, syscall.ECONNREFUSED)
}
