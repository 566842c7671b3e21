package server

import (
	"errors"
	"syscall"
)

// fdPeerUID reads SO_PEERCRED.
func fdPeerUID(fd uintptr) (int, error) {
	cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	if cred == nil {
		return 0, errors.New("no peer credentials")
	}
	return int(cred.Uid), nil
}
