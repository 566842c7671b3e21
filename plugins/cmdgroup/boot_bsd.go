//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package cmdgroup

import (
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// bootID names this boot by its time: a record from another boot means nothing here.
var bootID = sync.OnceValue(func() string {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return ""
	}
	return strconv.FormatInt(int64(tv.Sec), 10) + "." + strconv.FormatInt(int64(tv.Usec), 10)
})
