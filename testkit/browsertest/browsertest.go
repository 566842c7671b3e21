// Package browsertest is a helper of wend's own tests, not an API: it drives headless
// chromium (Debian's) for the web UI's browser tests: start one per test, run actions, read
// values, and wait for a selector's text, so tests wait for what the page shows rather than
// sleep. Tests of both modules import it; no product package may.
package browsertest

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/wendflow/wend/testkit/needs"
)

// ChromiumPath is Debian's chromium, which .ci/run installs.
const ChromiumPath = "/usr/bin/chromium"

// Need skips the test without chromium, saying how to install it, and fails it under
// WEND_TEST_ALL=1. A test that sets up a server before it calls Start calls Need first, so
// a machine without chromium does not build and start one for nothing.
func Need(t *testing.T) {
	t.Helper()
	needs.File(t, ChromiumPath, "the browser tests need Debian's chromium: apt-get install chromium")
}

// Start starts headless chromium for one test. Without chromium the test skips saying how
// to install it, and fails under WEND_TEST_ALL=1 (scripts/test, CI): the UI is part of what
// wend ships, so the full loop must test it. The flag it returns is set when any dialog
// (alert, confirm) opened: script ran that wend did not ship.
func Start(t *testing.T) (context.Context, *atomic.Bool) {
	t.Helper()
	Need(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	dialog := new(atomic.Bool)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			dialog.Store(true)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx, dialog
}

// Do runs actions, failing the test with what they were for.
func Do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Get runs one action that returns a value.
func Get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// Text waits until the element's text is want (pages refresh themselves by polling).
func Text(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		var err error
		got, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(`+JSString(sel)+`)||{}).textContent||""`))
		if err == nil && strings.TrimSpace(got) == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: text %q, want %q", sel, got, want)
}

// JSString quotes s as a JavaScript string literal for a selector.
func JSString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}
