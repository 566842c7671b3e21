package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
)

// Every code rebuilds to the status it travels with, the guard's included.
func TestStatusOfEveryCode(t *testing.T) {
	for code, want := range map[string]int{
		CodeBadRequest: 400, CodeInvalid: 400, CodeBadWorkflow: 400,
		CodeUnauthorized: 401, CodeForbidden: 403, CodeNotFound: 404,
		CodeRunClosed: 409, CodeBlocked: 409, CodeNotRetryable: 409,
		CodeUnknownSignal: 404, CodeBadSignal: 400, CodeBadQuery: 400, CodeQueryFailed: 422,
		CodeUnsupported: 501, CodeStopped: 503, CodeInternal: 500,
	} {
		if e := NewError(code, "m"); e.Status != want || e.Code != code {
			t.Errorf("NewError(%s) = %d %s, want %d", code, e.Status, e.Code, want)
		}
	}
}

// A client that keeps only the code of the guard's refusals rebuilds the right status.
func TestGuardErrorsRebuild(t *testing.T) {
	g := newGuard(guardConfig{act: webToken, loopback: true}, nil, New(nil, history.NewMemStore()))
	hs := httptest.NewServer(g)
	defer hs.Close()
	send := func(r *http.Request) (int, string) {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// No token on a mutation: 401 unauthorized.
	r, _ := http.NewRequest("POST", hs.URL+"/v1/runs/x/cancel", strings.NewReader(`{}`))
	code, body := send(r)
	wantError(t, code, body, http.StatusUnauthorized, CodeUnauthorized, "needs a token")
	if e := DecodeError(code, []byte(body)); NewError(e.Code, e.Message).Status != http.StatusUnauthorized {
		t.Fatalf("rebuilt %s: status %d", e.Code, NewError(e.Code, e.Message).Status)
	}

	// A session's mutation from another origin: 403 forbidden.
	r, _ = http.NewRequest("POST", hs.URL+"/v1/runs/x/cancel", strings.NewReader(`{}`))
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: g.actSession})
	r.Header.Set("Origin", "http://evil.example")
	code, body = send(r)
	wantError(t, code, body, http.StatusForbidden, CodeForbidden, "cross-site request refused")
	if e := DecodeError(code, []byte(body)); NewError(e.Code, e.Message).Status != http.StatusForbidden {
		t.Fatalf("rebuilt %s: status %d", e.Code, NewError(e.Code, e.Message).Status)
	}
}

// TestSentinelsRoundTrip: each engine and store sentinel becomes its code on the way
// out and is found again by errors.Is in the error rebuilt from that code, and by no other
// sentinel; one table says both directions (errors.go had two switches that could drift).
func TestSentinelsRoundTrip(t *testing.T) {
	for _, s := range sentinels {
		w := wrap(fmt.Errorf("start order-1: %w", s.err))
		if w.Code != s.code || w.Status != statusOf(s.code) || w.Message != "start order-1: "+s.err.Error() {
			t.Errorf("wrap(%v) = %d %s %q", s.err, w.Status, w.Code, w.Message)
		}
		back := NewError(w.Code, w.Message)
		for _, o := range sentinels {
			if got := errors.Is(back, o.err); got != (o.err == s.err) {
				t.Errorf("errors.Is(rebuilt %s, %v) = %v", s.code, o.err, got)
			}
		}
	}
	for _, err := range []error{history.ErrClosed, context.Canceled} {
		if w := wrap(fmt.Errorf("commit: %w", err)); w.Code != CodeStopped || w.Status != http.StatusServiceUnavailable {
			t.Errorf("wrap(%v) = %d %s, want 503 stopped", err, w.Status, w.Code)
		}
	}
	if w := wrap(errors.New("disk on fire")); w.Code != CodeInternal || w.Status != http.StatusInternalServerError {
		t.Errorf("a plain error wraps to %d %s, want 500 internal", w.Status, w.Code)
	}
}
