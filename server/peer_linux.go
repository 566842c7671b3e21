package server

import (
	"errors"
	"net"
	"syscall"
)

// peerUID is the user id of a unix connection's peer, as the kernel recorded it at connect.
func peerUID(c net.Conn) (uid int, known bool, err error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, false, err
	}
	if cerr != nil {
		return 0, false, cerr
	}
	if cred == nil {
		return 0, false, errors.New("no peer credentials")
	}
	return int(cred.Uid), true, nil
}
