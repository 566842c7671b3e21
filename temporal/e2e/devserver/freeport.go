package devserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort returns a TCP port of ip that is free now and lies below the kernel's range of
// ephemeral ports. A port taken from listen(":0") comes from that range, and so does the
// local port of every outgoing connection: between closing the probe and the server's own
// bind, a client or the server's services dialling each other could take it, and the server
// then dies with "address already in use". A port below the range is never handed out that
// way, so only a process that binds that very port can collide with it.
func FreePort(ip string) (int, error) {
	lo := ephemeralLow()
	const floor = 10000 // above the ports services are commonly configured on
	if lo-floor < 1000 {
		return anyPort(ip)
	}
	for range 200 {
		p := floor + rand.IntN(lo-floor)
		if portFree(ip, p) == nil {
			return p, nil
		}
	}
	return anyPort(ip)
}

// ephemeralLow is the first port of Linux's ip_local_port_range; 32768, Linux's default and
// below the BSDs' and macOS's 49152, where the file cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo <= 0 {
		return 32768
	}
	return lo
}

// anyPort is a port the kernel picks: the fallback when no range below the ephemeral one is
// left to choose from.
func anyPort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("devserver: find a free port on %s: %w", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
