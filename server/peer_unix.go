//go:build linux || darwin || freebsd

package server

import "net"

// peerUID is the user id of a unix connection's peer, as the kernel recorded it at connect
// (fdPeerUID asks the kernel in each system's words).
func peerUID(c net.Conn) (uid int, known bool, err error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = fdPeerUID(fd) }); err != nil {
		return 0, false, err
	}
	if cerr != nil {
		return 0, false, cerr
	}
	return uid, true, nil
}
