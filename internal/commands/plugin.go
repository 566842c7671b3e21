package commands

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/spec"
)

var pluginCmd = &command{
	summary: "describe a plugin, call one of its activities, roll running plugins to new code, or test a plugin",
	usage: `Usage: wend plugin describe (PATH | --workflow FILE NAME) [--json]
       wend plugin call PLUGIN.ACTIVITY --workflow FILE [--input JSON]
       wend plugin roll [NAME] [--json] [--db PATH]
       wend plugin test (PATH | --workflow FILE NAME) [--activity NAME --input JSON]
                        [--slow NAME --slow-input JSON]

describe starts the plugin (the executable at PATH, or the plugin NAME as workflow FILE
declares it), lists its activities with their descriptions and input and output JSON
Schemas, and stops it.

call starts the plugin PLUGIN as workflow FILE declares it, runs one try of ACTIVITY with
the input, prints the result JSON on stdout and heartbeats on stderr, and stops it.

roll asks the wend process that holds the database (wend serve, run or resume) to start a new
process of each running plugin NAME (every plugin without NAME) from its program as it is on
disk now; the old process finishes its tries in flight, then stops. Without it the next try
after a change to the program's file rolls by itself. A plugin pinned by sha256 refuses a
program that no longer matches. With no process holding the database nothing runs: the next
run starts the program as it is then.

Exit codes: 0 success, 1 the plugin failed to start or the activity returned an error
(its type, message and whether a retry could help are printed), or a new build did not
start (roll), 2 usage or I/O error.

` + pluginTestUsage,
	run: runPlugin,
}

func runPlugin(e *env, args []string) int {
	if len(args) == 0 {
		return usageError(e, "plugin", "want a subcommand: describe, call, roll or test")
	}
	switch args[0] {
	case "describe":
		return runPluginDescribe(e, args[1:])
	case "call":
		return runPluginCall(e, args[1:])
	case "roll":
		return runPluginRoll(e, args[1:])
	case "test":
		return runPluginTest(e, args[1:])
	}
	return usageError(e, "plugin", "unknown subcommand %q; want describe, call, roll or test", args[0])
}

func runPluginDescribe(e *env, args []string) int {
	fs := flag.NewFlagSet("plugin describe", flag.ContinueOnError)
	workflow := fs.String("workflow", "", "")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "plugin", "%s", flagError(err))
	}
	var cfg plugins.Config
	switch {
	case *workflow != "" && len(pos) == 1:
		c, err := declared(*workflow, pos[0])
		if err != nil {
			fmt.Fprintf(e.stderr, "wend plugin describe: %v\n", err)
			return exitUsage
		}
		cfg = c
	case *workflow == "" && len(pos) == 1:
		abs, err := filepath.Abs(pos[0])
		if err != nil {
			abs = pos[0]
		}
		cfg = plugins.Config{Name: strings.TrimSuffix(filepath.Base(pos[0]), filepath.Ext(pos[0])), Command: []string{abs}}
	default:
		return usageError(e, "plugin", "describe wants a plugin PATH, or --workflow FILE and a plugin NAME")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	d, err := plugins.DescribeCommand(ctx, cfg, pluginOptions(e))
	if err != nil {
		fmt.Fprintf(e.stderr, "wend plugin describe: %v\n", err)
		return exitFailed
	}
	if *asJSON {
		out, _ := json.MarshalIndent(d, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	n := fmt.Sprintf("%d activities", len(d.Activities))
	if len(d.Activities) == 1 {
		n = "1 activity"
	}
	fmt.Fprintf(e.stdout, "plugin %s: %s\n", cfg.Name, n)
	for _, a := range d.Activities {
		fmt.Fprintf(e.stdout, "\n%s.%s\n", cfg.Name, a.Name)
		if a.Description != "" {
			fmt.Fprintf(e.stdout, "  %s\n", a.Description)
		}
		fmt.Fprintf(e.stdout, "  input:  %s\n  output: %s\n", schemaText(a.InputSchema), schemaText(a.OutputSchema))
	}
	return exitOK
}

func schemaText(s json.RawMessage) string {
	if len(s) == 0 {
		return "any JSON"
	}
	return string(s)
}

func runPluginCall(e *env, args []string) int {
	fs := flag.NewFlagSet("plugin call", flag.ContinueOnError)
	workflow := fs.String("workflow", "", "")
	input := fs.String("input", "", "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "plugin", "%s", flagError(err))
	}
	if len(pos) != 1 || *workflow == "" {
		return usageError(e, "plugin", "call wants PLUGIN.ACTIVITY and --workflow FILE")
	}
	name, activity, ok := strings.Cut(pos[0], ".")
	if !ok || name == "" || activity == "" {
		return usageError(e, "plugin", "%q is not PLUGIN.ACTIVITY", pos[0])
	}
	raw, err := readInput(*input, "")
	if err != nil {
		fmt.Fprintf(e.stderr, "wend plugin call: %v\n", err)
		return exitUsage
	}
	cfg, err := declared(*workflow, name)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend plugin call: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out, err := plugins.CallOnce(ctx, cfg, pluginOptions(e), history.ActivityCall{Activity: activity, Input: raw},
		func(hb history.Heartbeat) { fmt.Fprintf(e.stderr, "heartbeat %s\n", hb.Progress) })
	if err != nil {
		var ae *history.ActivityError
		if errors.As(err, &ae) {
			retry := "a retry may help"
			if ae.NonRetryable {
				retry = "non-retryable"
			}
			msg := ae.Message
			if ae.Type != "" {
				msg = ae.Type + ": " + msg
			}
			fmt.Fprintf(e.stderr, "wend plugin call: %s.%s failed: %s (%s, %s)\n", name, activity, msg, ae.Category, retry)
			return exitFailed
		}
		fmt.Fprintf(e.stderr, "wend plugin call: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "%s\n", out)
	return exitOK
}

// declared reads a workflow file and returns its declaration of plugin name.
func declared(file, name string) (plugins.Config, error) {
	src, err := spec.ReadWorkflowFile(file)
	if err != nil {
		return plugins.Config{}, err
	}
	w, ds := (&spec.Loader{SkipChildren: true}).Load(file, src)
	if w == nil || ds.HasErrors() {
		return plugins.Config{}, fmt.Errorf("%s is invalid; run wend validate %s", file, file)
	}
	p, ok := w.Plugins[name]
	if !ok {
		return plugins.Config{}, fmt.Errorf("%s declares no plugin %q (it declares: %s)", file, name, strings.Join(w.PluginOrder, ", "))
	}
	return pluginConfig(file, p), nil
}

// pluginConfig maps a workflow's plugin declaration to the host's configuration.
func pluginConfig(file string, p *spec.Plugin) plugins.Config {
	dir := filepath.Dir(file)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return plugins.Config{Name: p.Name, Command: p.Command, Dir: dir, SHA256: p.SHA256, Env: p.Env, StartTimeout: p.StartTimeout.D}
}

func pluginOptions(e *env) plugins.Options {
	return plugins.Options{StartTimeout: pluginStartTimeout(e),
		Log: func(plugin, line string) { fmt.Fprintf(e.stderr, "plugin %s: %s\n", plugin, line) }}
}
