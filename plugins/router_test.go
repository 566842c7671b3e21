package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestRouterHostPerDeclaration: the same plugin name declared with two programs (here: two
// environments) gets two hosts, a repeated declaration reuses its host, and Close stops
// every process and empties the registry, so a later Reap finds nothing to kill.
func TestRouterHostPerDeclaration(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "plugins.reg")
	logs := &logLines{}
	r := NewRouter(Options{Registry: reg, Log: logs.log})
	a := call("demo", "greet", map[string]string{"name": "ada"})
	a.Declared = history.PluginRef{Command: []string{bins.goExample}}
	b := a
	b.Declared.Env = []string{"WEND_ROUTER_TEST=1"}
	for i, c := range []history.ActivityCall{a, a, b, b} {
		out, err := r.Execute(context.Background(), c, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if string(out) != `{"greeting":"hello, ada"}` {
			t.Fatalf("call %d = %s", i, out)
		}
	}
	if st := r.Stats(); st.Processes != 2 || st.Starts != 2 || st.Restarts != 0 {
		t.Fatalf("stats after two declarations = %+v, want 2 processes, 2 starts", st)
	}
	want := 0 // registry_other.go: nothing is recorded
	if registryKept {
		want = 2
	}
	if got := registryLines(t, reg); got != want {
		t.Fatalf("registry holds %d processes, want %d", got, want)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st != (Stats{}) {
		t.Fatalf("stats after Close = %+v, want none", st)
	}
	rep, err := Reap(reg)
	if err != nil || len(rep.Reaped) != 0 {
		t.Fatalf("Reap after Close = %+v, %v; want nothing left to reap", rep, err)
	}
}

// TestRouterUndeclaredPlugin: a call whose plugin the workflow never declared fails for
// good, as an internal error, without starting anything.
func TestRouterUndeclaredPlugin(t *testing.T) {
	r := NewRouter(Options{})
	defer r.Close()
	_, err := r.Execute(context.Background(), call("ghost", "x", nil), nil)
	var ae *history.ActivityError
	if !errors.As(err, &ae) || ae.Type != "PluginNotDeclared" || !ae.NonRetryable || ae.Category != history.CategoryInternal {
		t.Fatalf("err = %#v, want a non-retryable internal PluginNotDeclared", err)
	}
	if !strings.Contains(ae.Message, `"ghost"`) {
		t.Fatalf("message %q does not name the plugin", ae.Message)
	}
}

// registryLines counts the non-empty lines of a registry file (missing: 0).
func registryLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// TestRouteKeyTellsDeclarationsApart: the router's key, built by hand since it is built twice
// per try, is the same for equal declarations and differs whenever any field does, also
// where concatenating fields would make two declarations read alike.
func TestRouteKeyTellsDeclarationsApart(t *testing.T) {
	base := history.PluginRef{Command: []string{"python3", "p.py"}, Dir: "/w", SHA256: strings.Repeat("ab", 32), Env: []string{"A=1"}}
	with := func(f func(*history.PluginRef)) history.PluginRef {
		r := base
		r.Command, r.Env = append([]string(nil), base.Command...), append([]string(nil), base.Env...)
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name string
		a, b history.PluginRef
		an   string // plugin name of a ("p" when empty)
	}{
		{name: "command", a: base, b: with(func(r *history.PluginRef) { r.Command[1] = "q.py" })},
		{name: "argument split", a: with(func(r *history.PluginRef) { r.Command = []string{"a b"} }), b: with(func(r *history.PluginRef) { r.Command = []string{"a", "b"} })},
		{name: "argument or env", a: with(func(r *history.PluginRef) { r.Command, r.Env = []string{"x", "A=1"}, nil }), b: with(func(r *history.PluginRef) { r.Command, r.Env = []string{"x"}, []string{"A=1"} })},
		{name: "dir", a: base, b: with(func(r *history.PluginRef) { r.Dir = "/v" })},
		{name: "dir or name", a: with(func(r *history.PluginRef) { r.Dir = "" }), an: "p:", b: with(func(r *history.PluginRef) { r.Dir = ":" })},
		{name: "sha256", a: base, b: with(func(r *history.PluginRef) { r.SHA256 = "" })},
		{name: "env", a: base, b: with(func(r *history.PluginRef) { r.Env = []string{"A=2"} })},
		{name: "no env", a: base, b: with(func(r *history.PluginRef) { r.Env = nil })},
		{name: "start timeout", a: base, b: with(func(r *history.PluginRef) { r.StartTimeoutMS = 30000 })},
	} {
		an := tc.an
		if an == "" {
			an = "p"
		}
		if routeKey(an, tc.a) == routeKey("p", tc.b) {
			t.Errorf("%s: %+v and %+v share the key %q", tc.name, tc.a, tc.b, routeKey(an, tc.a))
		}
	}
	if routeKey("p", base) != routeKey("p", with(func(*history.PluginRef) {})) {
		t.Error("equal declarations get different keys")
	}
	if routeKey("p", base) == routeKey("q", base) {
		t.Error("two plugin names share a key")
	}
}

// A declaration's start_timeout bounds its plugin's start through the router, over the
// router's own StartTimeout.
func TestRouterUsesTheDeclaredStartTimeout(t *testing.T) {
	logs := &logLines{}
	r := NewRouter(Options{StartTimeout: time.Minute, StartBackoff: []time.Duration{}, Log: logs.log})
	t.Cleanup(func() { r.Close() })
	c := call("p", "noop", nil)
	c.Declared = history.PluginRef{Command: []string{bins.testPlugin}, Env: []string{"WEND_TESTPLUGIN_MODE=nohandshake"}, StartTimeoutMS: 1000}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ae := activityError(t, r.Prepare(ctx, c))
	if ae.Type != TypeStartTimeout || !strings.Contains(ae.Message, "no handshake within 1s") {
		t.Fatalf("Prepare: %+v, want a start timeout after the declared 1s", ae)
	}
}

// TestRouterRoutesByEveryField: a declaration reaches the host of the declaration equal to it
// in every field, whichever came last and whatever slices hold its command and environment;
// one differing in any field reaches a host of its own; after Close, a fresh host.
func TestRouterRoutesByEveryField(t *testing.T) {
	r := NewRouter(Options{Log: func(string, string) {}})
	base := history.PluginRef{Command: []string{"/bin/p", "--x"}, Dir: "/d", SHA256: strings.Repeat("ab", 32), Env: []string{"A=1"}, StartTimeoutMS: 5}
	hostOf := func(name string, ref history.PluginRef) *Host {
		t.Helper()
		h, err := r.host(name, ref)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := hostOf("p", base)
	others := map[string]history.PluginRef{}
	for what, change := range map[string]func(*history.PluginRef){
		"command": func(p *history.PluginRef) { p.Command = []string{"/bin/p", "--y"} },
		"dir":     func(p *history.PluginRef) { p.Dir = "/e" },
		"sha256":  func(p *history.PluginRef) { p.SHA256 = strings.Repeat("cd", 32) },
		"env":     func(p *history.PluginRef) { p.Env = []string{"A=2"} },
		"timeout": func(p *history.PluginRef) { p.StartTimeoutMS = 6 },
	} {
		ref := base
		ref.Command, ref.Env = slices.Clone(base.Command), slices.Clone(base.Env)
		change(&ref)
		others[what] = ref
	}
	seen := map[*Host]string{h: "base"}
	for what, ref := range others {
		o := hostOf("p", ref)
		if prev, dup := seen[o]; dup {
			t.Fatalf("%s changed: routed to the host of %s", what, prev)
		}
		seen[o] = what
		copied := base
		copied.Command, copied.Env = slices.Clone(base.Command), slices.Clone(base.Env)
		if got := hostOf("p", copied); got != h { // after another declaration, and from other slices
			t.Fatalf("the base declaration after %s: another host", what)
		}
		if got := hostOf("p", ref); got != o {
			t.Fatalf("%s again: another host", what)
		}
	}
	if hostOf("q", base) == h {
		t.Fatal("another plugin name: the same host")
	}
	r.Close()
	if hostOf("p", base) == h {
		t.Fatal("after Close: the closed host")
	}
}
