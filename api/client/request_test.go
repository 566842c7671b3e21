package client

import (
	"context"
	"io"
	"testing"
)

func TestNewRequest(t *testing.T) {
	tests := []struct {
		name     string
		in       any
		wantBody string
		wantType string
		wantErr  bool
	}{
		{name: "no body", in: nil},
		{name: "json body", in: map[string]int{"a": 1}, wantBody: `{"a":1}`, wantType: "application/json"},
		{name: "unencodable", in: func() {}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := NewRequest(context.Background(), "POST", "/v1/runs", tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatal("no error for a body json cannot encode")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.Path != "/v1/runs" || req.Method != "POST" {
				t.Errorf("request %s %s", req.Method, req.URL)
			}
			if got := req.Header.Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type %q, want %q", got, tt.wantType)
			}
			var body string
			if req.Body != nil {
				b, _ := io.ReadAll(req.Body)
				body = string(b)
			}
			if body != tt.wantBody {
				t.Errorf("body %q, want %q", body, tt.wantBody)
			}
		})
	}
}
