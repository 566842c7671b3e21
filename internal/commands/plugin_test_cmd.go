package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/spec"
)

// pluginTestUsage is the part of `wend help plugin` about `wend plugin test`.
const pluginTestUsage = `test starts the plugin (PATH, or NAME as workflow FILE declares it) and checks it against
the protocol wend speaks, a line per check (ok, FAIL or skip with the reason): the go-plugin
handshake, the health check, that it refuses clients without the host's TLS certificate,
Describe (names, and that every input and output schema compiles), Execute (a request for an
activity it does not offer must end with a non-retryable UnknownActivity error, and nothing
may follow a try's final event), Lane when it serves it (tries one after another on one
stream, a cancel while idle ignored, a clean end when wend closes its side), and that it exits
when asked to. With --workflow, a warning names each env: NAME not set here (the plugin gets
none of it). It runs none of the plugin's activities unless you name them:
  --activity NAME --input JSON     an activity safe to run that returns a result: called
                                   through Execute and Lane, its output checked against its
                                   schema, and once with a cancel right behind the request
  --slow NAME --slow-input JSON    an activity safe to run that runs for seconds and stops
                                   when cancelled (the examples' sleep {"ms":10000}): checks
                                   heartbeats and that a cancel ends a try within 2s
  --json                           one JSON document at the end instead of lines:
                                   {"plugin", "checks": [{"name", "status", "detail"}],
                                   "failed"}, for CI
  --verbose                        the plugin's stderr as it comes; without it, its lines
                                   are shown only when a check failed (the certificate check
                                   makes gRPC plugins log a failed handshake by design)
Exit codes: 0 every check passed or was skipped, 1 a check failed, 2 usage error.
`

// pluginTestReport is `wend plugin test --json`'s document.
type pluginTestReport struct {
	Plugin string            `json:"plugin"`
	Checks []pluginTestCheck `json:"checks"`
	Failed int               `json:"failed"`
}

type pluginTestCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, FAIL or skip, as the lines print it
	Detail string `json:"detail"`
}

func runPluginTest(e *env, args []string) int {
	fs := flag.NewFlagSet("plugin test", flag.ContinueOnError)
	workflow := fs.String("workflow", "", "")
	activity := fs.String("activity", "", "")
	input := fs.String("input", "", "")
	slow := fs.String("slow", "", "")
	slowInput := fs.String("slow-input", "", "")
	asJSON := fs.Bool("json", false, "")
	verbose := fs.Bool("verbose", false, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "plugin", "%s", flagError(err))
	}
	if len(pos) != 1 {
		return usageError(e, "plugin", "test wants a plugin PATH, or --workflow FILE and a plugin NAME")
	}
	if (*input != "" && *activity == "") || (*slowInput != "" && *slow == "") {
		return usageError(e, "plugin", "test: --input goes with --activity, --slow-input with --slow")
	}
	co := plugins.ConformOptions{Schema: compileSchema}
	if co.Call, err = sample(*activity, *input, "--input"); err != nil {
		fmt.Fprintf(e.stderr, "wend plugin test: %v\n", err)
		return exitUsage
	}
	if co.Slow, err = sample(*slow, *slowInput, "--slow-input"); err != nil {
		fmt.Fprintf(e.stderr, "wend plugin test: %v\n", err)
		return exitUsage
	}
	cfg, err := pluginTarget(*workflow, pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "wend plugin test: %v\n", err)
		return exitUsage
	}
	for _, v := range cfg.UnsetEnv() {
		fmt.Fprintf(e.stderr, "wend plugin test: warning: plugins.%s.env: %s\n", cfg.Name, unsetEnvNote(v))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	checks := 0
	rep := pluginTestReport{Plugin: cfg.Name, Checks: []pluginTestCheck{}}
	co.Report = func(c plugins.Check) {
		checks++
		if *asJSON {
			rep.Checks = append(rep.Checks, pluginTestCheck{Name: c.Name, Status: c.Status, Detail: c.Detail})
			return
		}
		fmt.Fprintf(e.stdout, "%-4s  %-13s %s\n", c.Status, c.Name, c.Detail)
	}
	opts := pluginOptions(e)
	var held heldLines
	if !*verbose {
		opts.Log = held.add
	}
	failed := plugins.Conform(ctx, cfg, opts, co)
	if lines := held.take(); failed > 0 && len(lines) > 0 {
		fmt.Fprintf(e.stderr, "plugin %s wrote on stderr while it was checked:\n", cfg.Name)
		for _, l := range lines {
			fmt.Fprintf(e.stderr, "  %s\n", l)
		}
	}
	if *asJSON {
		rep.Failed = failed
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "wend plugin test: %v\n", err)
			return exitInternal
		}
		if failed > 0 {
			return exitFailed
		}
		return exitOK
	}
	if failed > 0 {
		fmt.Fprintf(e.stdout, "plugin %s: %d of %d checks failed\n", cfg.Name, failed, checks)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "plugin %s: %d checks, none failed\n", cfg.Name, checks)
	return exitOK
}

// heldLines keeps a plugin's stderr lines until the checks are done; lines after take are
// dropped (the plugin's last words as it is stopped).
type heldLines struct {
	mu    sync.Mutex
	lines []string
	taken bool
}

func (h *heldLines) add(_, line string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.taken && len(h.lines) < 1000 {
		h.lines = append(h.lines, line)
	}
}

func (h *heldLines) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.taken = true
	return h.lines
}

// pluginTarget is the plugin at path, or the plugin path names in workflow when it is set.
func pluginTarget(workflow, path string) (plugins.Config, error) {
	if workflow != "" {
		return declared(workflow, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return plugins.Config{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Command: []string{abs}}, nil
}

// sample is an activity named on the command line with its input (null when none is given).
func sample(activity, input, flagName string) (plugins.Sample, error) {
	if activity == "" {
		return plugins.Sample{}, nil
	}
	if input == "" {
		return plugins.Sample{Activity: activity, Input: json.RawMessage("null")}, nil
	}
	if !json.Valid([]byte(input)) {
		return plugins.Sample{}, fmt.Errorf("%s is not valid JSON: %s", flagName, jsonProblem(flagName, []byte(input)))
	}
	return plugins.Sample{Activity: activity, Input: json.RawMessage(input)}, nil
}

// compileSchema compiles an activity's JSON Schema as `wend validate --plugins` does.
func compileSchema(raw json.RawMessage) (func(json.RawMessage) error, error) {
	s, err := spec.CompileJSONSchema(raw)
	if err != nil {
		return nil, err
	}
	return func(v json.RawMessage) error {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		return spec.ValidateInput(s, x)
	}, nil
}
