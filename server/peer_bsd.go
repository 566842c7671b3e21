//go:build darwin || freebsd

package server

import (
	"errors"

	"golang.org/x/sys/unix"
)

// fdPeerUID reads LOCAL_PEERCRED.
func fdPeerUID(fd uintptr) (int, error) {
	cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	if cred == nil {
		return 0, errors.New("no peer credentials")
	}
	return int(cred.Uid), nil
}
