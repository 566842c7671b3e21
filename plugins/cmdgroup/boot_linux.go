//go:build linux

package cmdgroup

import (
	"os"
	"strings"
	"sync"
)

// bootID names this boot and pid namespace: a record from another means nothing here.
var bootID = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return strings.TrimSpace(string(b)) + " " + ns
})
