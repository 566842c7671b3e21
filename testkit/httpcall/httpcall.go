// Package httpcall sends one request to a test server of the API and reads its JSON answer:
// the step every HTTP-level test of the server and of batches repeats.
package httpcall

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Do sends method path (under base, a test server's URL) with body (none when empty), checks
// that the answer is JSON, decodes a success into out (when not nil) and returns the status and
// the raw body.
func Do(t testing.TB, base, method, path, body string, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, string(b)
}
