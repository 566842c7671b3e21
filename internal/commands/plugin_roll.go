package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
)

// runPluginRoll is `wend plugin roll [NAME]`: the process that holds the database rolls its
// running plugins to the programs now on disk (POST /v1/plugins/roll).
func runPluginRoll(e *env, args []string) int {
	fs := flag.NewFlagSet("plugin roll", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "plugin", "%s", flagError(err))
	}
	if len(pos) > 1 {
		return usageError(e, "plugin", "roll wants at most one plugin NAME, got %d arguments", len(pos))
	}
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	path := dbPath(e, *db)
	b, err := openBackend(e, path, readRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend plugin roll: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	c, ok := b.(*client)
	if !ok {
		fmt.Fprintf(e.stdout, "nothing to roll: no wend process holds %s, so no plugin runs; the next run starts the programs as they are then\n", path)
		return exitOK
	}
	rep, err := c.RollPlugins(context.Background(), name)
	if err != nil {
		return commandError(e, "plugin roll", err)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
	}
	code := exitOK
	for _, r := range rep.Rolled {
		if r.Error != "" {
			fmt.Fprintf(e.stderr, "wend plugin roll: %s: the new build did not start, pid %d goes on serving: %s\n", r.Plugin, r.OldPID, r.Error)
			code = exitFailed
		} else if !*asJSON {
			fmt.Fprintf(e.stdout, "rolled %s: pid %d (build %s) -> pid %d (build %s); the old process stops after its tries in flight\n",
				r.Plugin, r.OldPID, short(r.OldSHA256), r.NewPID, short(r.NewSHA256))
		}
	}
	if len(rep.Rolled) == 0 && !*asJSON {
		what := "no plugin runs"
		if name != "" {
			what = fmt.Sprintf("plugin %s does not run", name)
		}
		fmt.Fprintf(e.stdout, "nothing to roll: %s in wend %s; its next try starts the program as it is then\n", what, c.holder())
	}
	return code
}

// short abbreviates a sha256 for people, as git does; "unknown" when there is none.
func short(sha string) string {
	if sha == "" {
		return "unknown"
	}
	return sha[:min(12, len(sha))]
}
