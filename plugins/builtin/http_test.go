package builtin

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testServer answers each path with one of the faults web.request must handle.
func testServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "query": r.URL.RawQuery,
			"auth": r.Header.Get("Authorization"), "type": r.Header.Get("Content-Type"), "body": string(body)})
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "plain") })
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code := map[string]int{"404": 404, "409": 409, "429": 429, "503": 503}[r.PathValue("code")]
		if code == 503 {
			w.Header().Set("Retry-After", "7")
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "why")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a RST, not a FIN
			}
			_ = conn.Close()
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		chunk := strings.Repeat("x", 64<<10)
		for range 64 { // 4 MiB
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestRequest(t *testing.T) {
	s := testServer(t)
	tlsServer := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "secure") }))
	t.Cleanup(tlsServer.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsServer.Certificate().Raw}))
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name      string
		in        map[string]any
		want      string // output JSON with keys sorted, headers dropped
		errType   string
		permanent bool
		errHas    string
	}{
		{name: "json request and response", in: map[string]any{"method": "post", "url": s.URL + "/echo?a=1", "query": map[string]any{"b": []any{"x", 2}},
			"headers": map[string]string{"Authorization": "Bearer t"}, "json": map[string]any{"k": "v"}},
			want: `{"json":{"auth":"Bearer t","body":"{\"k\":\"v\"}","method":"POST","query":"a=1\u0026b=x\u0026b=2","type":"application/json"},"status":200}`},
		{name: "text body", in: map[string]any{"url": s.URL + "/echo", "method": "PUT", "body": "hi", "headers": map[string]string{"Content-Type": "text/plain"}},
			want: `{"json":{"auth":"","body":"hi","method":"PUT","query":"","type":"text/plain"},"status":200}`},
		{name: "text response", in: map[string]any{"url": s.URL + "/text"}, want: `{"body":"plain","status":200}`},
		{name: "expected 404", in: map[string]any{"url": s.URL + "/status/404", "expect": []any{"2xx", 404}}, want: `{"body":"why","status":404}`},
		{name: "404 fails for good", in: map[string]any{"url": s.URL + "/status/404"}, errType: "HTTP404", permanent: true, errHas: "status 404"},
		{name: "429 is retryable", in: map[string]any{"url": s.URL + "/status/429"}, errType: "HTTP429"},
		{name: "503 with Retry-After", in: map[string]any{"url": s.URL + "/status/503?token=hidden"}, errType: "HTTP503", errHas: "(Retry-After 7s)"},
		{name: "retry_statuses makes 409 retryable", in: map[string]any{"url": s.URL + "/status/409", "retry_statuses": []int{409}}, errType: "HTTP409"},
		{name: "retry_statuses makes 503 permanent", in: map[string]any{"url": s.URL + "/status/503", "retry_statuses": []int{409}}, errType: "HTTP503", permanent: true},
		{name: "slow server", in: map[string]any{"url": s.URL + "/slow", "timeout": "200ms"}, errType: "Timeout"},
		{name: "connection reset", in: map[string]any{"url": s.URL + "/reset"}, errType: "ConnectionError"},
		{name: "connection refused", in: map[string]any{"url": closedURL}, errType: "ConnectionError"},
		{name: "huge body", in: map[string]any{"url": s.URL + "/huge"}, errType: "ResponseTooLarge", permanent: true, errHas: "1048576-byte limit"},
		{name: "body limit", in: map[string]any{"url": s.URL + "/text", "max_response_bytes": 3}, errType: "ResponseTooLarge", permanent: true},
		{name: "untrusted certificate", in: map[string]any{"url": tlsServer.URL}, errType: "TLSError", permanent: true},
		{name: "given CA", in: map[string]any{"url": tlsServer.URL, "ca_pem": caPEM}, want: `{"body":"secure","status":200}`},
		{name: "bad CA", in: map[string]any{"url": tlsServer.URL, "ca_pem": "nope"}, errType: "BadInput", permanent: true, errHas: "no PEM certificate"},
		{name: "not a URL", in: map[string]any{"url": "ftp://x"}, errType: "BadInput", permanent: true, errHas: "url"},
		{name: "json and body", in: map[string]any{"url": s.URL, "json": 1, "body": "x"}, errType: "BadInput", permanent: true, errHas: "not both"},
		{name: "bad expect", in: map[string]any{"url": s.URL, "expect": []any{"6xx"}}, errType: "BadInput", permanent: true, errHas: "expect"},
		{name: "bad timeout", in: map[string]any{"url": s.URL, "timeout": "-1s"}, errType: "BadInput", permanent: true, errHas: "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := call(t, context.Background(), "http", "request", tt.in)
			if tt.errType != "" {
				if err == nil {
					t.Fatalf("want a %s failure, got output %v", tt.errType, out)
				}
				if err.Type != tt.errType || err.NonRetryable != tt.permanent || !strings.Contains(err.Message, tt.errHas) {
					t.Fatalf("got %s (non-retryable %v) %q; want %s (non-retryable %v) containing %q",
						err.Type, err.NonRetryable, err.Message, tt.errType, tt.permanent, tt.errHas)
				}
				if strings.Contains(err.Message, "hidden") {
					t.Errorf("the message shows the URL's query: %q", err.Message)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected failure %v", err)
			}
			if out["headers"] == nil {
				t.Error("output has no headers")
			}
			delete(out, "headers")
			if got, _ := json.Marshal(out); string(got) != tt.want {
				t.Errorf("output\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestRetryAfterDetails(t *testing.T) {
	s := testServer(t)
	_, err := call(t, context.Background(), "http", "request", map[string]any{"url": s.URL + "/status/503"})
	if err == nil {
		t.Fatal("want a failure")
	}
	b, _ := json.Marshal(err.Details)
	var d struct {
		Status     int     `json:"status"`
		Body       string  `json:"body"`
		RetryAfter float64 `json:"retry_after_seconds"`
	}
	if e := json.Unmarshal(b, &d); e != nil || d.Status != 503 || d.Body != "why" || d.RetryAfter != 7 {
		t.Errorf("details %s", b)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"0": 0, "120": 2 * time.Minute, "Thu, 01 Jan 2026 00:01:00 GMT": time.Minute,
		"Wed, 31 Dec 2025 00:00:00 GMT": 0} {
		if got, ok := retryAfter(v, now); !ok || got != want {
			t.Errorf("retryAfter(%q) = %s, %v; want %s", v, got, ok, want)
		}
	}
	if _, ok := retryAfter("soon", now); ok {
		t.Error("retryAfter accepted \"soon\"")
	}
}
