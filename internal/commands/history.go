package commands

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/runview"
)

var historyCmd = &command{
	summary: "export a run's history (wend.history-export/v1)",
	usage: `Usage: wend history ID [--json] [--output F] [--db PATH]

Exports the newest run of workflow id ID (or the run with run id ID) as one document,
derived from its durable history alone: the workflow (ids, status, closed_reason, spec
sha256, timeouts, times, input, output or failure), history_events[] (every event as
stored), activities[] with attempts[] (each try's outcome, error and retry schedule),
timers[], signals[], children[], compensations[], failures[] (failure_category,
propagation_kind, non_retryable) and operator_metrics. The JSON form is described by
schemas/history-export.schema.json ("schema": "wend.history-export/v1"); exporting the
same history twice gives the same bytes. Without --json the same facts are printed for a
person (as 'wend show' does, without the current waits).

Flags:
  --json       print the export as indented JSON
  --output F   write the JSON export to file F instead of stdout (always JSON); the file
               is replaced atomically, so a reader never sees half an export
  --db PATH    database file (default $WEND_DB, else .wend/wend.db)

Exit codes: 0 exported, 1 no such workflow or run, 2 usage or I/O error.
`,
	run: runHistory,
}

func runHistory(e *env, args []string) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	output := fs.String("output", "", "")
	db := dbFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return usageError(e, "history", "%s", flagError(err))
	}
	if len(pos) != 1 {
		return usageError(e, "history", "want one workflow or run ID, got %d arguments", len(pos))
	}
	if isFlagSet(fs, "output") && *output == "" {
		return usageError(e, "history", "--output needs a file name")
	}
	b, err := openBackend(e, dbPath(e, *db), readRuns)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend history: %v\n", err)
		return exitUsage
	}
	defer b.Close()
	doc, err := b.Export(pos[0])
	if err != nil {
		return commandError(e, "history", err)
	}
	if *output == "" && !*asJSON {
		if err := export.RenderNamed(e.stdout, doc, docStepIDs(doc)); err != nil {
			fmt.Fprintf(e.stderr, "wend history: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		fmt.Fprintf(e.stderr, "wend history: %v\n", err)
		return exitUsage
	}
	js = append(js, '\n')
	if *output == "" {
		_, _ = e.stdout.Write(js) // like every command's stdout: a closed pipe is the reader's choice
		return exitOK
	}
	if err := writeFileAtomic(*output, js); err != nil {
		fmt.Fprintf(e.stderr, "wend history: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// isFlagSet reports whether the command line set the flag, so an empty --output is an error
// rather than silently printing to stdout.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and renames it over
// path: a reader (or a crash) sees the old file or the whole new one, never a prefix.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil { // CreateTemp's 0600 would surprise next to a plain '> F'
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// docStepIDs are the step ids of the spec an export's run started with (its first event),
// for naming steps in the text; none when the export does not start so.
func docStepIDs(doc *export.Document) map[string]string {
	if len(doc.HistoryEvents) == 0 {
		return nil
	}
	return runview.SpecNow(fromExport(doc, "").events).StepIDs() // a moved run's steps by its new text
}
