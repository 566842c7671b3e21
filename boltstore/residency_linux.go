//go:build linux && !wend_portable

package boltstore

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

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

// fileBackedRSS is the process's file-backed resident set in bytes (the third field of
// /proc/self/statm: pages backed by a file or shared memory), -1 where it cannot be read.
func fileBackedRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return -1
	}
	return n * int64(os.Getpagesize())
}
