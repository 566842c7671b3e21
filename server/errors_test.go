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

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/spec"
)

// Every code rebuilds to the status it travels with, the guard's included.
func TestStatusOfEveryCode(t *testing.T) {
	for code, want := range map[string]int{
		api.CodeBadRequest: 400, api.CodeInvalid: 400, api.CodeBadWorkflow: 400,
		api.CodeUnauthorized: 401, api.CodeForbidden: 403, api.CodeNotFound: 404,
		api.CodeRunClosed: 409, api.CodeBlocked: 409, api.CodeNotRetryable: 409,
		api.CodeUnknownSignal: 404, api.CodeBadSignal: 400, api.CodeBadQuery: 400, api.CodeQueryFailed: 422,
		api.CodeUnsupported: 501, api.CodeStopped: 503, api.CodeInternal: 500,
	} {
		if e := api.NewError(code, "m"); e.Status != want || e.Code != code {
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
	wantError(t, code, body, http.StatusUnauthorized, api.CodeUnauthorized, "needs a token")
	if e := api.DecodeError(code, []byte(body)); api.NewError(e.Code, e.Message).Status != http.StatusUnauthorized {
		t.Fatalf("rebuilt %s: status %d", e.Code, api.NewError(e.Code, e.Message).Status)
	}

	// A session's mutation from another origin: 403 forbidden.
	r, _ = http.NewRequest("POST", hs.URL+"/v1/runs/x/cancel", strings.NewReader(`{}`))
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: g.actSession})
	r.Header.Set("Origin", "http://evil.example")
	code, body = send(r)
	wantError(t, code, body, http.StatusForbidden, api.CodeForbidden, "cross-site request refused")
	if e := api.DecodeError(code, []byte(body)); api.NewError(e.Code, e.Message).Status != http.StatusForbidden {
		t.Fatalf("rebuilt %s: status %d", e.Code, api.NewError(e.Code, e.Message).Status)
	}
}

// TestSentinelsRoundTrip: each engine, workflow-language and store sentinel becomes its code
// on the way out and is found again by errors.Is in the error rebuilt from that code, and by
// no other sentinel (package api holds the one table that says both directions).
func TestSentinelsRoundTrip(t *testing.T) {
	sentinels := []struct {
		err  error
		code string
	}{
		{history.ErrNotFound, api.CodeNotFound},
		{engine.ErrRunClosed, api.CodeRunClosed},
		{engine.ErrBlocked, api.CodeBlocked},
		{engine.ErrInvalidInput, api.CodeInvalid},
		{engine.ErrNotRetryable, api.CodeNotRetryable},
		{engine.ErrBadID, api.CodeBadID},
		{engine.ErrTooLarge, api.CodeTooLarge},
		{engine.ErrSignalLimit, api.CodeLimit},
		{engine.ErrIDTaken, api.CodeIDTaken},
		{engine.ErrQueued, api.CodeQueued},
		{spec.ErrUndeclaredSignal, api.CodeUnknownSignal},
		{spec.ErrSignalData, api.CodeBadSignal},
		{engine.ErrStopped, api.CodeStopped},
	}
	for _, s := range sentinels {
		w := wrap(fmt.Errorf("start order-1: %w", s.err))
		if w.Code != s.code || w.Status != api.StatusOf(s.code) || w.Message != "start order-1: "+s.err.Error() {
			t.Errorf("wrap(%v) = %d %s %q", s.err, w.Status, w.Code, w.Message)
		}
		back := api.NewError(w.Code, w.Message)
		for _, o := range sentinels {
			if got := errors.Is(back, o.err); got != (o.err == s.err) {
				t.Errorf("errors.Is(rebuilt %s, %v) = %v", s.code, o.err, got)
			}
		}
	}
	for _, err := range []error{history.ErrClosed, context.Canceled} {
		if w := wrap(fmt.Errorf("commit: %w", err)); w.Code != api.CodeStopped || w.Status != http.StatusServiceUnavailable {
			t.Errorf("wrap(%v) = %d %s, want 503 stopped", err, w.Status, w.Code)
		}
	}
	if w := wrap(errors.New("disk on fire")); w.Code != api.CodeInternal || w.Status != http.StatusInternalServerError {
		t.Errorf("a plain error wraps to %d %s, want 500 internal", w.Status, w.Code)
	}
}
