package builtin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is a server that notes the headers of each request it gets.
type recorder struct {
	mu   sync.Mutex
	seen []http.Header
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Header.Clone())
	r.mu.Unlock()
	_, _ = w.Write([]byte("landed"))
}

func (r *recorder) take() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seen
	r.seen = nil
	return s
}

// TestRedirectDropsSecretHeaders plays a server that redirects a request to a host of its
// choosing: no header the input set, nor the URL's user info, goes there; the same host
// gets them all; a body is not sent to another host at all.
func TestRedirectDropsSecretHeaders(t *testing.T) {
	other := &recorder{}
	otherSrv := httptest.NewServer(other)
	t.Cleanup(otherSrv.Close)
	home := &recorder{}
	mux := http.NewServeMux()
	mux.Handle("/landing", home)
	mux.HandleFunc("/away/{code}", func(w http.ResponseWriter, r *http.Request) {
		code := map[string]int{"302": 302, "303": 303, "307": 307, "308": 308}[r.PathValue("code")]
		http.Redirect(w, r, otherSrv.URL+"/landing", code)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/landing", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	homeSrv := httptest.NewServer(mux)
	t.Cleanup(homeSrv.Close)
	withUser := strings.Replace(homeSrv.URL, "http://", "http://admin:pw-in-url@", 1)
	headers := map[string]string{"X-Tok": "tok-1", "Authorization": "Bearer tok-2", "X-Api-Key": "tok-3"}

	tests := []struct {
		name, url string
		body      bool
		errType   string
		home      bool // the headers reach the first server's landing page
	}{
		{name: "same host keeps them", url: homeSrv.URL + "/here", home: true},
		{name: "302 to another host", url: homeSrv.URL + "/away/302"},
		{name: "303 to another host, body dropped", url: homeSrv.URL + "/away/303", body: true},
		{name: "307 to another host without a body", url: homeSrv.URL + "/away/307"},
		{name: "user info in the URL", url: withUser + "/away/302"},
		{name: "307 with a body is refused", url: homeSrv.URL + "/away/307", body: true, errType: "RedirectRefused"},
		{name: "308 with a body is refused", url: homeSrv.URL + "/away/308", body: true, errType: "RedirectRefused"},
		{name: "redirect loop", url: homeSrv.URL + "/loop", errType: "ConnectionError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := map[string]any{"url": tt.url, "headers": headers}
			if tt.body {
				in["method"], in["json"] = "POST", map[string]string{"password": "tok-4"}
			}
			out, err := call(t, context.Background(), "http", "request", in)
			if tt.errType != "" {
				if err == nil || err.Type != tt.errType {
					t.Fatalf("got %v, %v; want a %s failure", out, err, tt.errType)
				}
				if strings.Contains(err.Message, "pw-in-url") {
					t.Errorf("the message shows the URL's user info: %q", err.Message)
				}
				if got := other.take(); len(got) > 0 {
					t.Fatalf("the other host got %d requests", len(got))
				}
				return
			}
			if err != nil || out["body"] != "landed" {
				t.Fatalf("got %v, %v; want the landing page", out, err)
			}
			if tt.home {
				got := home.take()
				if len(got) != 1 || got[0].Get("X-Tok") != "tok-1" || got[0].Get("Authorization") != "Bearer tok-2" || got[0].Get("X-Api-Key") != "tok-3" {
					t.Fatalf("the same host got %v, want every header", got)
				}
				return
			}
			got := other.take()
			if len(got) != 1 {
				t.Fatalf("the other host got %d requests, want 1", len(got))
			}
			for k, v := range got[0] {
				if strings.Contains(strings.Join(v, ","), "tok-") || strings.Contains(strings.Join(v, ","), "pw-in-url") || k == "Authorization" {
					t.Errorf("the other host got %s: %v", k, v)
				}
			}
		})
	}
}
