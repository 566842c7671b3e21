package devserver

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortIsBelowTheEphemeralRange: the port must be bindable and outside the range the
// kernel hands to listen(":0") and to outgoing connections, or a client's local port can take
// it before the server binds it (the server then dies with "address already in use").
func TestFreePortIsBelowTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	below := lo-10000 >= 1000 // else FreePort falls back to the kernel's pick, which need only bind
	seen := map[int]bool{}
	for range 20 {
		p, err := FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if below && (p < 10000 || p >= lo) {
			t.Fatalf("FreePort gave %d, want a port in [10000, %d)", p, lo)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("FreePort gave %d, which does not bind: %v", p, err)
		}
		l.Close()
		seen[p] = true
	}
	if len(seen) < 2 {
		t.Fatalf("20 calls gave one port, %v: the choice is not spread over the range", seen)
	}
}

// TestFreePortSkipsATakenPort: with the first pick held by a listener, FreePort must not return it.
func TestFreePortSkipsATakenPort(t *testing.T) {
	held := map[int]net.Listener{}
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range 50 {
		p, err := FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := held[p]; dup {
			t.Fatalf("FreePort gave %d, which this test holds", p)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("FreePort gave %d, which does not bind: %v", p, err)
		}
		held[p] = l
	}
}
