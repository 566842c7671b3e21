package builtin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// shortBounds makes the request bounds short for one test.
func shortBounds(t *testing.T, whole, idle time.Duration) {
	oldWhole, oldIdle := defaultTimeout, idleTimeout
	defaultTimeout, idleTimeout = whole, idle
	t.Cleanup(func() { defaultTimeout, idleTimeout = oldWhole, oldIdle })
}

// trickle sends a byte every interval, for ever (until the client goes), after pause.
func trickle(pause, interval time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(pause):
		}
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(interval):
			}
		}
	}
}

// TestRequestBounds: a request without a timeout ends anyway, with a retryable Timeout:
// a body that keeps trickling ends at the default bound of the whole request, one that
// stops coming at the idle bound, whichever the input's timeout.
func TestRequestBounds(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/trickle", trickle(0, 20*time.Millisecond))
	mux.Handle("/stall", trickle(time.Hour, time.Hour))
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	tests := []struct {
		name    string
		in      map[string]any
		whole   time.Duration
		idle    time.Duration
		msgHas  string
		atLeast time.Duration
	}{
		{name: "trickle hits the default timeout", in: map[string]any{"url": s.URL + "/trickle"}, whole: 400 * time.Millisecond, idle: time.Hour,
			msgHas: "Client.Timeout", atLeast: 400 * time.Millisecond},
		{name: "stalled body hits the idle bound", in: map[string]any{"url": s.URL + "/stall"}, whole: time.Hour, idle: 300 * time.Millisecond,
			msgHas: "no byte of the response body came for 300ms", atLeast: 300 * time.Millisecond},
		{name: "the idle bound holds under a longer timeout", in: map[string]any{"url": s.URL + "/stall", "timeout": "1h"}, whole: time.Hour, idle: 300 * time.Millisecond,
			msgHas: "no byte of the response body came", atLeast: 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shortBounds(t, tt.whole, tt.idle)
			start := time.Now()
			done := make(chan struct{})
			go func() {
				defer close(done)
				out, err := call(t, context.Background(), "http", "request", tt.in)
				if err == nil || err.Type != "Timeout" || err.NonRetryable || !strings.Contains(err.Message, tt.msgHas) {
					t.Errorf("got %v, %v; want a retryable Timeout containing %q", out, err, tt.msgHas)
				}
			}()
			select {
			case <-done:
			case <-time.After(time.Minute): // far beyond the bounds: the request never ended
				t.Fatal("the request did not end")
			}
			if d := time.Since(start); d < tt.atLeast {
				t.Errorf("ended after %s, before its bound %s", d, tt.atLeast)
			}
		})
	}
}

// TestURLUserInfoNeverShown: whatever fails about a URL with user info, the message
// shows neither the user info nor a piece of it.
func TestURLUserInfoNeverShown(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	for _, u := range []string{
		"ftp://admin:hunter2\"quote\\back@example.com/",
		"http:admin:hunter2@example.com",
		"http://admin:hunter2%zz@example.com/",
		"http://admin:hunter2 x@exa mple.com/",
		"http://admin:hunter2%22q@" + host + "/x",
		"http://admin:hunter2@" + host + "/x",
	} {
		_, err := call(t, context.Background(), "http", "request", map[string]any{"url": u})
		if err == nil {
			t.Fatalf("%s: want a failure", u)
		}
		if strings.Contains(err.Message, "hunter2") || strings.Contains(err.Message, "admin") {
			t.Errorf("%s: the message shows the user info: %q", u, err.Message)
		}
	}
}
