package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/spec"
)

// TestNamesAgree keeps the names the spec accepts, the host's way of starting a builtin and
// this package in step: they cannot import each other.
func TestNamesAgree(t *testing.T) {
	if !slices.Equal(spec.Builtins, Names()) {
		t.Errorf("spec.Builtins = %v, builtin.Names() = %v", spec.Builtins, Names())
	}
	if spec.BuiltinCommandPrefix != plugins.BuiltinCommandPrefix || plugins.BuiltinEnv != BuiltinEnv {
		t.Errorf("spec and plugins disagree on how a builtin is started")
	}
}

// hostFor starts builtin name as a plugin process the way wend does, this test binary
// standing in for wend (TestMain serves it).
func hostFor(t *testing.T, name string) *plugins.Host {
	t.Helper()
	h, err := plugins.New([]plugins.Config{{Name: name, Command: []string{plugins.BuiltinCommandPrefix + name}, Dir: t.TempDir()}},
		plugins.Options{StartTimeout: 20 * time.Second, Log: func(p, line string) { t.Logf("plugin %s: %s", p, line) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func TestBuiltinsServeAsPlugins(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			h := hostFor(t, name)
			d, err := h.Describe(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			want := Activities(name)
			if len(d.Activities) != len(want) {
				t.Fatalf("described %d activities, want %d", len(d.Activities), len(want))
			}
			for _, a := range d.Activities {
				if !json.Valid(a.InputSchema) || !json.Valid(a.OutputSchema) || len(a.InputSchema) == 0 || len(a.OutputSchema) == 0 {
					t.Errorf("%s.%s lacks an input or output schema", name, a.Name)
				}
			}
		})
	}
}

func TestExecThroughTheHost(t *testing.T) {
	h := hostFor(t, "exec")
	run := func(input string, deadline time.Duration) (json.RawMessage, error) {
		call := history.ActivityCall{Plugin: "exec", Activity: "run", Input: json.RawMessage(input),
			ActivityExecutionID: "x", ActivityAttemptID: "x.1", Attempt: 1}
		if deadline > 0 {
			call.Deadline = time.Now().Add(deadline)
		}
		return h.Execute(context.Background(), call, nil)
	}
	out, err := run(`{"argv": ["echo", "hi"]}`, 0)
	if err != nil || string(out) != `{"exit_code":0,"stdout":"hi\n","stderr":""}` {
		t.Fatalf("echo: %s, %v", out, err)
	}
	_, err = run(`{"argv": ["exit 4"], "shell": true}`, 0)
	var ae *history.ActivityError
	if !errors.As(err, &ae) || ae.Type != "ExitCode4" || ae.NonRetryable || !json.Valid(ae.Details) {
		t.Fatalf("exit 4: got %#v", err)
	}
	start := time.Now()
	_, err = run(`{"argv": ["sleep", "60"]}`, 500*time.Millisecond)
	if !errors.As(err, &ae) || ae.Category != history.CategoryTimeout {
		t.Fatalf("past the try's deadline: got %#v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("a try past its deadline took %s", d)
	}
}

func TestHTTPThroughTheHost(t *testing.T) {
	s := testServer(t)
	h := hostFor(t, "http")
	call := history.ActivityCall{Plugin: "http", Activity: "request", Input: json.RawMessage(`{"url": "` + s.URL + `/status/503"}`),
		ActivityExecutionID: "x", ActivityAttemptID: "x.1", Attempt: 1}
	_, err := h.Execute(context.Background(), call, nil)
	var ae *history.ActivityError
	if !errors.As(err, &ae) || ae.Type != "HTTP503" || ae.NonRetryable || !strings.Contains(string(ae.Details), `"retry_after_seconds":7`) {
		t.Fatalf("503: got %#v", err)
	}
	// The Retry-After crosses the protocol as the wait before the next try.
	if ae.NextRetryDelayMS != 7000 {
		t.Errorf("503 with Retry-After 7: next retry delay %d ms, want 7000", ae.NextRetryDelayMS)
	}
}

// TestHTTPSendsInputTextAsText plays whoever starts a run with input that spells a secret's
// reference: the server gets that text in the query, the URL and a header, and the value
// only in the header the workflow's template put it in.
func TestHTTPSendsInputTextAsText(t *testing.T) {
	t.Setenv("WEND_TEST_HTTP_PW", "hunter2-value")
	type seen struct{ q, path, note, auth string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.Query().Get("q"), r.URL.Path, r.Header.Get("X-Note"), r.Header.Get("Authorization")}
	}))
	t.Cleanup(srv.Close)
	ref := "${{ secrets.pw }}"
	input, _ := json.Marshal(map[string]any{"url": srv.URL + "/p/" + url.PathEscape(ref), "query": map[string]any{"q": ref},
		"headers": map[string]string{"X-Note": ref, "Authorization": "Bearer " + ref}})
	h := hostFor(t, "http")
	call := history.ActivityCall{Plugin: "http", Activity: "request", Input: input, ActivityExecutionID: "x", ActivityAttemptID: "x.1", Attempt: 1,
		Secrets:      []history.SecretRef{{Name: "pw", Env: "WEND_TEST_HTTP_PW"}},
		SecretPlaces: []history.SecretPlace{{Path: []string{"headers", "Authorization"}, Name: "pw", Offset: len("Bearer ")}}}
	if _, err := h.Execute(context.Background(), call, nil); err != nil {
		t.Fatal(err)
	}
	want := seen{q: ref, path: "/p/" + ref, note: ref, auth: "Bearer hunter2-value"}
	if s := <-got; s != want {
		t.Fatalf("the server saw %+v, want %+v", s, want)
	}
}
