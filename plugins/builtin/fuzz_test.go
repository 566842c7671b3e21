package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	sdk "github.com/wendflow/wend/sdk/go"
)

// FuzzHTTPInput decodes and checks any web.request input up to the point of sending it: never a
// panic, and every refusal is a non-retryable BadInput.
func FuzzHTTPInput(f *testing.F) {
	for _, s := range []string{`{"url":"http://x.test/a?b=1","query":{"c":[1,true,"d"]},"expect":["2xx",404]}`,
		`{"url":"https://x.test","json":{"a":1},"body":"x"}`, `{"url":"ftp://x"}`, `{"url":"http://x","ca_pem":"-----BEGIN"}`,
		`{"url":"http://x","method":"BAD METHOD","timeout":"1h"}`, `{"expect":[6.5]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var in httpInput
		if json.Unmarshal([]byte(raw), &in) != nil {
			return
		}
		in.CAFile = "" // no reads of arbitrary files
		req, _, _, err := in.build(context.Background())
		if err != nil {
			var se *sdk.Error
			if !errors.As(err, &se) || se.Type != sdk.TypeBadInput || !se.NonRetryable {
				t.Fatalf("refusal %v is not a non-retryable BadInput", err)
			}
			return
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			t.Fatalf("built a request to %s", req.URL)
		}
		for s := 100; s < 600; s++ {
			in.expected(s)
			in.retryable(s)
		}
	})
}

// FuzzExecInput checks any sh.run input without running it.
func FuzzExecInput(f *testing.F) {
	for _, s := range []string{`{"argv":["echo","hi"],"env":["A","B=1"],"timeout":"1s"}`, `{"argv":[]}`,
		`{"argv":[""],"max_output_bytes":-1}`, `{"argv":["x"],"env":["1=2"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var in execInput
		if json.Unmarshal([]byte(raw), &in) != nil {
			return
		}
		limit, timeout, err := in.check()
		if err != nil {
			var se *sdk.Error
			if !errors.As(err, &se) || se.Type != sdk.TypeBadInput || !se.NonRetryable {
				t.Fatalf("refusal %v is not a non-retryable BadInput", err)
			}
			return
		}
		if limit < 1 || limit > maxOutputBytes || timeout < 0 || len(in.Argv) == 0 {
			t.Fatalf("accepted limit %d, timeout %s, argv %q", limit, timeout, in.Argv)
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", "Thu, 01 Jan 2026 00:01:00 GMT", "-5", "soon", "99999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d, ok := retryAfter(v, now); ok && d < 0 {
			t.Fatalf("retryAfter(%q) = %s", v, d)
		}
	})
}
