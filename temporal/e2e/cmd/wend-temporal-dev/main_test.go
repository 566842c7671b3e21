package main

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// syncBuffer lets the test read what run writes from another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDevServerPrintsAddressAndStops: the printed address is one a client can use with the
// printed namespace, the hints name it, and stopping ends run with exit 0.
func TestDevServerPrintsAddressAndStops(t *testing.T) {
	var out, errOut syncBuffer
	stop := make(chan struct{})
	done := make(chan int, 1)
	go func() { done <- run([]string{"--port", "0"}, &out, &errOut, stop) }()
	addrRE := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+) \(namespace default`)
	var addr string
	for deadline := time.Now().Add(2 * time.Minute); addr == "" && time.Now().Before(deadline); {
		select {
		case code := <-done:
			t.Fatalf("run returned %d before stop; stderr:\n%s", code, errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("no address printed; stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "wend-temporal worker --temporal "+addr) {
		t.Errorf("no worker hint for %s:\n%s", addr, out.String())
	}
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		t.Fatalf("dial the printed address: %v", err)
	}
	c.Close()
	close(stop)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut.String())
	}
	if !strings.HasSuffix(out.String(), "stopped\n") {
		t.Errorf("stdout does not end with stopped:\n%s", out.String())
	}
}

// TestDevServerUsageErrors: bad flags exit 2 with a message naming the flag.
func TestDevServerUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "70000"}, "--port 70000: want 0-65535"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--nope"}, "flag provided but not defined: -nope"},
	} {
		var out, errOut syncBuffer
		if code := run(tc.args, &out, &errOut, nil); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: stderr %q does not say %q", tc.args, errOut.String(), tc.want)
		}
	}
}
