package boltstore

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockHolders reads /proc/locks for the flock locks held (not waited for) on path's file:
// the kernel's word on who holds the database, whatever pid file was left behind.
func lockHolders(path string) []lockHolder {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	var hs []lockHolder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF"; a waiter's line has "->" after
		// the number.
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid <= 0 {
			continue
		}
		hs = append(hs, lockHolder{pid: pid, shared: fs[3] == "READ"})
	}
	return hs
}
