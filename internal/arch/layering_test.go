package arch

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wendflow/wend"

// Third-party modules, by the import path prefix their packages share.
const (
	bbolt      = "go.etcd.io/bbolt"
	yaml       = "go.yaml.in/yaml/v3"
	expr       = "github.com/expr-lang/expr"
	jsonschema = "github.com/santhosh-tekuri/jsonschema/v5"
	goplugin   = "github.com/hashicorp/go-plugin"
	hclog      = "github.com/hashicorp/go-hclog"
	grpc       = "google.golang.org/grpc"
	protobuf   = "google.golang.org/protobuf"
	xsys       = "golang.org/x/sys"
	prometheus = "github.com/prometheus/client_golang"
	cron       = "github.com/robfig/cron/v3"
	otel       = "go.opentelemetry.io/otel"
)

// allowed lists, per package of ours (module-relative), what its non-test code may import
// besides the standard library: packages of ours by module-relative path (an entry covers a
// package and its sub-packages: "sdk/go/proto" allows sdk/go/proto/wend/plugin/v1; a
// package's own sub-packages are not allowed unless listed), and third-party packages by
// the prefixes above. The direction: spec and history at the bottom,
// the interpreter on them, the engine on the interpreter, stores and plugin hosts beside the
// engine, the server over the engine, the batch runner over the server, the application
// (app) assembling them, the CLI on top.
var allowed = map[string][]string{
	"history":           {},
	"api":               {"history"},        // the control API's wire types: standard library and history only
	"api/client":        {"api", "history"}, // the control API's Go client: light enough for any program
	"history/export":    {"history", "internal/termtext", "runview"},
	"history/storetest": {"history"},
	"schemas":           {},
	"spec":              {"api", "schemas", "schedule", "internal/inputfile", yaml, expr, jsonschema},
	"spec/graph":        {"spec"}, // draws a workflow file: a model and its Mermaid, dot and SVG renderers
	"schedule":          {cron},   // pure: fire times and overlap decisions, no clock or store
	"schedule/runner":   {"history", "interpreter/engine", "failpoint", "schedule", "spec"},
	"interpreter":       {"history", "spec"},
	"runview":           {"api", "history", "interpreter", "spec"}, // the read side: folds, never stores
	"interpreter/sim":   {"history", "interpreter", "spec"},        // the in-memory host: no store, plugin or wall clock
	"interpreter/engine": {"api", "history", "interpreter", "spec",
		"failpoint",              // no-ops unless built with the faults tag
		"internal/tracecontext"}, // the trace context a try's plugin gets
	"boltstore":                   {"history", bbolt, xsys}, // x/sys: statx, which syscall lacks
	"plugins":                     {"history", "sdk/go/fastlane", "sdk/go/wire", "sdk/go/proto", "plugins/cmdgroup", goplugin, hclog, grpc, xsys},
	"plugins/cmdgroup":            {xsys},                               // the exec builtin's command groups: recorded by the plugin, reaped by both
	"plugins/builtin":             {"sdk/go", "plugins/cmdgroup", xsys}, // the plugins wend serves itself, written with the SDK; x/sys: Windows job objects
	"plugins/internal/testplugin": {"sdk/go", "testkit/secretforms", goplugin, hclog, grpc},
	"server":                      {"api", "api/client", "history", "history/export", "interpreter", "interpreter/engine", "runview", "schedule", "spec", xsys}, // x/sys: a socket peer's uid on macOS and FreeBSD
	"batch":                       {"api", "history", "interpreter/engine", "server"},                                                                           // wend serve's batches: acts on runs through the server's methods
	"server/metrics":              {"history", "interpreter/engine", "runview", "schedule", "server", prometheus},
	"server/web":                  {"api", "history", "history/export", "interpreter/engine", "runview", "schedule", "server", "spec", "spec/graph"},
	"server/internal/servertest":  {"history", "schedule/runner", "spec"},
	"testsuite":                   {"history", "interpreter", "internal/inputfile", "internal/termtext", "spec", yaml, expr},
	// The application over one database: store, plugins, engine, and serve's schedules, batches
	// and retention, assembled once for the commands and the tests.
	"app":         {"api", "batch", "boltstore", "history", "interpreter/engine", "plugins", "schedule/runner", "server", "server/metrics", "spec", "tracing"},
	"app/apptest": {"app", "batch", "history", "interpreter/engine", "server", "testkit/enginetest"}, // the tests' one setup: an App, or an engine and Server over a store
	"internal/commands": {"api", "api/client", "app", "boltstore", "history", "history/export", "internal/inputfile", "internal/termtext", "interpreter/engine", "plugins", "plugins/builtin", "runview", "schedule", "schemas", "server",
		"server/metrics", "server/web", "spec", "spec/graph", "testsuite", jsonschema,
		"internal/tracecontext", "tracing"}, // --traceparent, the trace ids on step lines, the spans
	"tracing":               {"history", "internal/tracecontext", otel}, // spans from committed events; the only importer of OpenTelemetry
	"cmd/wend":              {"internal/commands"},
	"examples/plugins/demo": {"sdk/go"},
	"bench":                 {"api", "boltstore", "history", "interpreter/engine", "bench/harness", "plugins", "runview", "server", bbolt}, // measures the engine over its store, against a plain bbolt file; serveburst reads a run's waits through the API
	"bench/harness":         {"api", "api/client"},                                                                                         // starts and drives a wend serve for the benchmarks and the Temporal yardstick
	"bench/heapserve":       {"internal/commands"},                                                                                         // wend's command line that writes a heap profile when the bench asks
	"internal/tracecontext": {"github.com/cespare/xxhash/v2"},                                                                              // W3C traceparent and the span ids derived from a run (XXH64 from cespare/xxhash)
	"internal/termtext":     {},                                                                                                            // escapes stored text for a terminal: standard library only
	"internal/inputfile":    {},                                                                                                            // reads the files wend is given: regular files only, through a limit
	"internal/crashtest":    {},
	"internal/arch":         {},

	// The Go plugin SDK's module (sdk/go, listed by sdkPackages): only its own packages.
	"sdk/go":                      {"sdk/go/fastlane", "sdk/go/wire", "sdk/go/proto", goplugin, hclog, grpc},
	"sdk/go/wire":                 {"sdk/go/proto", goplugin, grpc},
	"sdk/go/fastlane":             {"sdk/go/wire", protobuf},
	"sdk/go/lanetest":             {"sdk/go/proto"},
	"sdk/go/proto/wend/plugin/v1": {grpc, protobuf},
}

// The public seam of the packages the temporal module imports instead of internal/ ones (its
// own test, temporal/internal/arch, refuses any import of internal/): the command line for
// binaries that extend it, the failpoints, and the test helpers both modules' tests share.
func init() {
	// wend's command line for binaries that extend it (wend-temporal): a thin layer over
	// internal/commands, with engine.Activities and server.Backend in its API.
	allowed["cli"] = []string{"internal/commands", "interpreter/engine", "server"}
	// The crash tests' kill points: empty functions unless built with -tags faults.
	allowed["failpoint"] = []string{}
	// /proc and the example plugin's invocation log, and the UI's browser driver.
	allowed["testkit/proctest"] = []string{}
	allowed["testkit/browsertest"] = []string{"github.com/chromedp/chromedp", "github.com/chromedp/cdproto", "testkit/needs"}
	testOnly = append(testOnly, "testkit/proctest", "testkit/browsertest")
	// An OTLP/gRPC trace collector the trace tests export to.
	allowed["testkit/otlptest"] = []string{"go.opentelemetry.io/proto/otlp", "google.golang.org/grpc", protobuf}
	testOnly = append(testOnly, "testkit/otlptest")
	// A secret's common encodings, for the tests and the test plugin that play a leaking plugin.
	allowed["testkit/secretforms"] = []string{}
	// What a test needs beyond Go (a tool, a full-size run): skip or fail, one way for all.
	allowed["testkit/needs"] = []string{}
	testOnly = append(testOnly, "testkit/needs")
	// A benchmark's own CPU time, beside its wall time.
	allowed["testkit/cputime"] = []string{}
	testOnly = append(testOnly, "testkit/cputime")
	allowed["testkit/quantile"] = []string{}
	allowed["testkit/httpcall"] = []string{}
	testOnly = append(testOnly, "testkit/httpcall")
	testOnly = append(testOnly, "testkit/quantile")
	// The tests' one engine setup: low enough for the tests of the packages app assembles.
	allowed["testkit/enginetest"] = []string{"history", "interpreter/engine"}
	testOnly = append(testOnly, "testkit/enginetest")
}

// testOnly lists the test-support packages: tests import them, no package of ours may.
var testOnly = []string{"history/storetest", "sdk/go/lanetest",
	"server/internal/servertest", "app/apptest"}

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	// ./... leaves out the directories go.mod ignores (the main packages besides cmd/wend);
	// their imports follow the rules too.
	args := append([]string{"list", "-json=ImportPath,Dir,GoFiles,Imports", "./..."}, packagesBelow(t, ignoredDirs(t))...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
		touch(p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// packagesBelow returns dirs and every folder below them that holds a .go file, as ./relative
// paths: no pattern matches below an ignored directory (./bench/... matches nothing), so the
// packages there (bench/harness) are named one by one.
func packagesBelow(t *testing.T, dirs []string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join("../..", d), func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			rel, err := filepath.Rel("../..", filepath.Dir(path))
			if p := "./" + filepath.ToSlash(rel); err == nil && !slices.Contains(out, p) && !strings.Contains(p, "/testdata") {
				out = append(out, p)
			}
			return err
		})
		if err != nil {
			t.Fatalf("list the packages below %s: %v", d, err)
		}
	}
	return out
}

// touch reads the package's folder and stats its files, so go test's cache, which records
// what a test opens, reruns this test when a package of ours gains a file or an import.
func touch(p pkg) {
	_, _ = os.ReadDir(p.Dir)
	for _, f := range p.GoFiles {
		_, _ = os.Stat(filepath.Join(p.Dir, f))
	}
}

func TestLayering(t *testing.T) {
	for _, p := range append(listPackages(t), sdkPackages(t)...) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		rule, ok := allowed[rel]
		if !ok {
			t.Errorf("package %s has no layering rule: add what it may import to allowed in internal/arch/layering_test.go", rel)
			continue
		}
		for _, imp := range p.Imports {
			if problem := check(rel, rule, imp); problem != "" {
				t.Error(problem)
			}
		}
	}
}

// check says what is wrong with package rel importing imp under rule, or "".
func check(rel string, rule []string, imp string) string {
	if isStandard(imp) {
		return ""
	}
	own, ours := strings.CutPrefix(imp, module+"/")
	if ours {
		if slices.Contains(testOnly, own) && !slices.Contains(testOnly, rel) { // test helpers may share
			return rel + " imports " + own + ", which only tests may import"
		}
		for _, a := range rule {
			if own == a || strings.HasPrefix(own, a+"/") {
				return ""
			}
		}
		return rel + " imports " + own + ": not in its rule in internal/arch/layering_test.go (see docs/design.md, Layers)"
	}
	for _, a := range rule {
		if imp == a || strings.HasPrefix(imp, a+"/") {
			return ""
		}
	}
	return rel + " imports " + imp + ": a third-party package not in its rule in internal/arch/layering_test.go"
}

// isStandard tells a standard library path by its first element, which has no dot.
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// TestRulesRefuse shows the allow-list refuses what no rule names: the imports the old
// deny-list let through, and a package importing upward.
func TestRulesRefuse(t *testing.T) {
	for _, c := range []struct{ pkg, imp string }{
		{"history", expr},
		{"history", module + "/spec"},
		{"spec", prometheus + "/prometheus"},
		{"interpreter", module + "/interpreter/engine"},
		{"interpreter/engine", module + "/boltstore"},
		{"server", module + "/internal/commands"},
		{"server", prometheus + "/prometheus"},
		{"server", module + "/server/metrics"},
		{"server", module + "/server/web"},
		{"server/web", prometheus + "/prometheus"},
		{"boltstore", module + "/spec"},
		{"internal/commands", module + "/interpreter/sim"}, // the CLI reaches the in-memory host through testsuite only
		{"sdk/go", module + "/history"},                    // the SDK's module requires nothing of wend's
		{"sdk/go/wire", module + "/plugins"},
		{"server", module + "/testkit/proctest"},
		{"failpoint", module + "/history"},
	} {
		if check(c.pkg, allowed[c.pkg], c.imp) == "" {
			t.Errorf("%s importing %s passes the rules; it must not", c.pkg, c.imp)
		}
	}
	for _, c := range []struct{ pkg, imp string }{
		{"history", "encoding/json"},
		{"spec", expr + "/vm"},
		{"plugins", module + "/sdk/go/proto/wend/plugin/v1"},
	} {
		if p := check(c.pkg, allowed[c.pkg], c.imp); p != "" {
			t.Errorf("%s importing %s refused: %s", c.pkg, c.imp, p)
		}
	}
}
