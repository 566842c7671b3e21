package boltstore

import "syscall"

// dropPages tells the kernel that the process no longer needs the pages of [addr, addr+size)
// of bbolt's read-only shared file mapping. Their content stays in the page cache, and a later
// read of one faults it back from there: nothing is lost, the pages just stop counting in the
// process's resident set until they are read again.
func dropPages(addr uintptr, size int64) error {
	if addr == 0 || size <= 0 {
		return nil
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(size), syscall.MADV_DONTNEED); errno != 0 {
		return errno
	}
	return nil
}
