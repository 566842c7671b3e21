package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/wendflow/wend/bench/harness"
)

// serveKind is one way of running the workloads through a real `wend serve` process: the
// built cmd/wend with the example Go plugin (what users run), or the same command line with
// the activities answered in the process (wendserve with WEND_YARDSTICK_NOOP=1, like the
// Temporal worker's no-op); each with the store's write-ahead log (WEND_STORE_LOG=1) or
// without it.
type serveKind struct {
	name string
	noop bool
	log  bool
	wend string // the wend binary; empty: the one buildServe built
}

var serveKinds = []serveKind{
	{name: "serve plugin", noop: false, log: false},
	{name: "serve plugin +log", noop: false, log: true},
	{name: "serve no-op", noop: true, log: false},
	{name: "serve no-op +log", noop: true, log: true},
}

// binaries are what the serve systems run, built once per yardstick run.
type binaries struct {
	wend, wendserve, plugin, flows string
}

// buildServe builds cmd/wend and the example plugin in wend's own module (as go run ./bench
// does) and wendserve in this one, and writes the three workloads as workflow files naming
// the plugin, for `wend serve --workflows`.
func buildServe(dir string) (binaries, error) {
	root, err := goOutput("", "list", "-m", "-f", "{{.Dir}}", "github.com/wendflow/wend")
	if err != nil {
		return binaries{}, err
	}
	b := binaries{wend: filepath.Join(dir, "wend"), wendserve: filepath.Join(dir, "wendserve"),
		plugin: filepath.Join(dir, "demo"), flows: filepath.Join(dir, "flows")}
	for _, x := range []struct{ dir, out, pkg string }{
		{root, b.wend, "./cmd/wend"},
		{root, b.plugin, "./examples/plugins/demo"},
		{"", b.wendserve, "github.com/wendflow/wend/temporal/e2e/cmd/yardstick/wendserve"},
	} {
		if _, err := goOutput(x.dir, "build", "-o", x.out, x.pkg); err != nil {
			return binaries{}, err
		}
	}
	if err := os.MkdirAll(b.flows, 0o755); err != nil {
		return binaries{}, err
	}
	decl := fmt.Sprintf("plugins: {p: %q}\n", b.plugin)
	files := map[string]string{
		"sseq":   strings.Replace(seqSpec, "plugins: {p: ./p}\n", decl, 1),
		"sfan":   strings.Replace(fanSpec, "plugins: {p: ./p}\n", decl, 1),
		"sthree": strings.Replace(threeSpec, "plugins: {p: ./p}\n", decl, 1),
	}
	for name, src := range files {
		src = strings.Replace(src, "name: "+strings.TrimPrefix(name, "s")+"200\n", "name: "+name+"\n", 1)
		src = strings.Replace(src, "name: three\n", "name: "+name+"\n", 1)
		if err := os.WriteFile(filepath.Join(b.flows, name+".wend.yaml"), []byte(src), 0o644); err != nil {
			return binaries{}, err
		}
	}
	return b, nil
}

func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if os.Getenv("GOTOOLCHAIN") == "" {
		// This module wants a newer Go than a local toolchain may be; let go fetch it.
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// served is a running `wend serve` of one kind (bench/harness, shared with go run ./bench).
type served struct {
	*harness.Serve
	name string
	n    atomic.Int64
}

// startServe starts `wend serve` of kind k on a fresh database in dir, with no TCP listener
// and the workloads registered; profile, when set, is the file for a CPU profile of the
// process (then wendserve runs the plugin kinds too: the same code as cmd/wend). It returns
// once the socket answers, one 3-step run has completed, so the plugin process is running,
// and the store has passed its first checkpoint, as in a long-running server.
func startServe(ctx context.Context, b binaries, k serveKind, dir, profile string) (*served, error) {
	base := filepath.Join(dir, strings.NewReplacer(" ", "-", "+", "").Replace(k.name))
	bin := b.wend
	if k.wend != "" {
		bin = k.wend
	}
	env := withoutEnv(os.Environ(), "WEND_STORE_LOG", "WEND_YARDSTICK_NOOP", "WEND_YARDSTICK_CPUPROFILE")
	if k.log {
		env = append(env, "WEND_STORE_LOG=1")
	} else {
		env = append(env, "WEND_STORE_LOG=0") // the log is the store's default
	}
	if k.noop || profile != "" {
		bin = b.wendserve
	}
	if k.noop {
		env = append(env, "WEND_YARDSTICK_NOOP=1")
	}
	if profile != "" {
		env = append(env, "WEND_YARDSTICK_CPUPROFILE="+profile)
	}
	hs, err := harness.Start(harness.Options{Bin: bin, DB: base + ".db", Flags: []string{"--workflows", b.flows},
		Log: base + ".log", Env: env, Workflows: 3})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.name, err)
	}
	s := &served{Serve: hs, name: k.name}
	if err := s.run(ctx, "sthree", nil); err != nil {
		s.Kill()
		return nil, fmt.Errorf("%s warm-up: %w\n%s", k.name, err, s.Tail())
	}
	// A new store's first checkpoint comes after 1,024 commits, and until then its commits are
	// slower than they are for the rest of its life (docs/performance.md, "The log's step and
	// the file system"). A long-running server is past it: so is this one before any round.
	for range storeWarmSeqRuns {
		if err := s.seq(ctx); err != nil {
			s.Kill()
			return nil, fmt.Errorf("%s warm-up: %w\n%s", k.name, err, s.Tail())
		}
	}
	return s, nil
}

// storeWarmSeqRuns sequential runs of about 200 commits each take a new store past its first
// checkpoint.
const storeWarmSeqRuns = 6

func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		drop := false
		for _, n := range names {
			drop = drop || strings.HasPrefix(kv, n+"=")
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// run starts a run of the registered workflow and waits until it has closed, as a client
// of `wend serve` does: POST /v1/runs, then GET /v1/runs/{id}/wait (a long poll the server
// answers when the run closes). An error unless the run completed.
func (s *served) run(ctx context.Context, workflow string, input json.RawMessage) error {
	return s.Run(ctx, fmt.Sprintf("%s-%d", workflow, s.n.Add(1)), workflow, input)
}

func (s *served) seq(ctx context.Context) error { return s.run(ctx, "sseq", nil) }
func (s *served) fan(ctx context.Context) error { return s.run(ctx, "sfan", fanInput) }
func (s *served) three(ctx context.Context) error {
	return together(100, func(int) error { return s.run(ctx, "sthree", nil) })
}

// stop stops the process cleanly (which writes a CPU profile); an error names the kind and
// ends with the log's tail.
func (s *served) stop() error {
	if _, err := s.Stop(); err != nil {
		return fmt.Errorf("%s: %w\n%s", s.name, err, s.Tail())
	}
	return nil
}
