package commands

import (
	"context"
	"encoding/json"

	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/wendflow/wend/spec"
)

// maxTextFindings caps the findings printed per file in text output; --json prints all.
const maxTextFindings = 50

var validateCmd = &command{
	summary: "check workflow files against the schema and the language rules",
	usage: `Usage: wend validate [--json] [--plugins] [--target local|temporal] PATH...
       wend validate --against DB|EXPORT.json|DIR... FILE...
       wend validate --against temporal --temporal HOST:PORT [--namespace NS] FILE...

Checks workflow files without running anything: YAML syntax, the JSON Schema, step kinds,
step ids, expressions (compiled against the names in scope), durations, plugins and
run_workflow children. A PATH may be a file or a folder; folders are searched for
*.wend.yaml and *.wend.yml files (hidden folders and node_modules are skipped).
It never opens a database or the network, so it is safe as a pre-commit hook.

Output: one line per finding on stdout, sorted by position:
    examples/order.wend.yaml:12:7: steps[1].retry.tries: must be >= 0
then a summary on stderr.

Flags:
  --plugins also start each declared plugin (the workflow must be valid otherwise), check
            that every activity: exists, and check literal with: inputs against the
            activity's input schema; warn of an env: NAME not set here (the plugin
            would get none)
  --target temporal
            also report what cannot run on a Temporal cluster or runs differently there
            (a run_workflow file that cannot be read is an error; a plugin program run
            by relative path without sha256, plugin env names read on the worker and a
            heartbeat_timeout under 1s are warnings; wait_for_workflow holding a worker
            slot is an info)
  --against DB|EXPORT.json|DIR
            (repeatable) once the files are valid, replay every open run of each file's
            workflow (matched by name:) on the file, from a wend database (through wend
            serve's socket when it holds it) or from history exports (wend history ID
            --output FILE, GET /v1/runs/ID/export; no database needed), a folder naming
            the exports in it (its *.json files), or, as --against temporal, from the
            Temporal cluster --temporal HOST:PORT (or WEND_TEMPORAL) names, read as wend
            list and wend history --temporal read it. One line per run on
            stdout: "holds", or "breaks at event N, step ID at FILE:LINE:COL: why", then a
            summary on stderr; exit 1 if any run would break
  --json    print a JSON array of findings on stdout instead:
            [{"file", "line", "column", "path", "name", "message", "severity"}]
            (line and column are 1-based; 0 when the finding is about the whole file;
            name is path from the nearest step with an id, by its id, and left out where
            no step on the path has one; severity is "error", "warning" or "info"). An
            empty array means all valid.

Exit codes: 0 all files valid, 1 some file invalid, 2 usage or I/O error (a PATH that
does not exist or cannot be read), 70 internal error. With --against, 1 also when an open
run would break, and 2 when a database or export cannot be read or an export is not sound.
`,
	run: runValidate,
}

func runValidate(e *env, args []string) int {
	fset := flag.NewFlagSet("validate", flag.ContinueOnError)
	asJSON := fset.Bool("json", false, "")
	withPlugins := fset.Bool("plugins", false, "")
	target := fset.String("target", spec.TargetLocal, "")
	var against listFlag
	fset.Var(&against, "against", "")
	// Cluster flags reach here only without --against temporal (else they name its cluster).
	var cluster string
	for _, f := range temporalFlags {
		fset.Func(f.name, "", func(string) error { cluster = f.name; return nil })
	}
	paths, err := parseArgs(fset, args)
	if err != nil {
		return usageError(e, "validate", "%s", flagError(err))
	}
	if cluster != "" {
		return usageError(e, "validate", "--%s names a Temporal cluster; validate reads its open runs with --against temporal --temporal HOST:PORT", cluster)
	}
	if !slices.Contains(spec.Targets, *target) {
		return usageError(e, "validate", "--target %q: want one of %s", *target, strings.Join(spec.Targets, ", "))
	}
	if len(against) > 0 && *asJSON {
		return usageError(e, "validate", "--against prints a line per run; it has no --json form yet")
	}
	if len(paths) == 0 {
		return usageError(e, "validate", "no PATH given; name workflow files or folders, e.g. wend validate examples/")
	}
	files, ioErrs := findWorkflows(paths)
	results := loadAll(files)
	var all spec.Diagnostics
	invalid := 0
	for i, r := range results {
		if r.err != nil {
			ioErrs = append(ioErrs, r.err)
			continue
		}
		ds := r.diags
		if *withPlugins && !ds.HasErrors() && r.w != nil {
			ds = append(ds, checkPlugins(context.Background(), e, files[i], r.w)...)
		}
		if !ds.HasErrors() {
			ds = append(ds, spec.CheckTarget(r.w, *target)...)
		}
		if ds.HasErrors() {
			invalid++
		}
		all = append(all, ds...)
	}
	all = relativize(all)
	if *asJSON {
		printJSON(e, all)
	} else {
		printText(e, all)
	}
	for _, err := range ioErrs {
		fmt.Fprintf(e.stderr, "wend validate: %v\n", err)
	}
	if !*asJSON {
		fmt.Fprintln(e.stderr, summary(len(files)-countLoadErrs(results), invalid, len(ioErrs), all))
	}
	switch {
	case len(ioErrs) > 0:
		return exitUsage
	case invalid > 0:
		return exitFailed
	case len(against) > 0:
		return validateAgainst(e, against, files, results)
	}
	return exitOK
}

type loadResult struct {
	w     *spec.Workflow
	diags spec.Diagnostics
	err   error
}

// loadAll checks files on every core; each worker keeps its own Loader (and so its own cache
// of run_workflow children). Results come back in file order, so output never depends on
// scheduling.
func loadAll(files []string) []loadResult {
	// Validation allocates many short-lived trees; collecting less often is most of a 2x win
	// on a folder of 1,000 files, and the process is short-lived.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	out := make([]loadResult, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &spec.Loader{}
			for i := range next {
				w, ds, err := l.LoadFile(files[i])
				out[i] = loadResult{w, ds, err}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// findWorkflows expands folders into their workflow files, in lexical order. Files named
// explicitly are taken whatever their suffix.
func findWorkflows(paths []string) ([]string, []error) {
	var files []string
	var errs []error
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			if d.IsDir() && path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && isWorkflowFile(d.Name()) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return slices.Compact(files), errs
}

func isWorkflowFile(name string) bool {
	return strings.HasSuffix(name, ".wend.yaml") || strings.HasSuffix(name, ".wend.yml")
}

// relativize shows paths relative to the current folder when they are below it.
func relativize(ds spec.Diagnostics) spec.Diagnostics {
	wd, err := os.Getwd()
	if err != nil {
		return ds
	}
	for i := range ds {
		abs, err := filepath.Abs(ds[i].File)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
			ds[i].File = rel
		}
	}
	return ds.Sorted()
}

func printText(e *env, ds spec.Diagnostics) {
	perFile := map[string]int{}
	for _, d := range ds {
		perFile[d.File]++
		n := perFile[d.File]
		if n <= maxTextFindings {
			fmt.Fprintln(e.stdout, d.String())
		}
		if n == maxTextFindings+1 {
			more := 0
			for _, d2 := range ds {
				if d2.File == d.File {
					more++
				}
			}
			fmt.Fprintf(e.stdout, "%s: (and %d more)\n", d.File, more-maxTextFindings)
		}
	}
}

func printJSON(e *env, ds spec.Diagnostics) {
	if ds == nil {
		ds = spec.Diagnostics{}
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ds); err != nil {
		fmt.Fprintf(e.stderr, "wend validate: write output: %v\n", err)
	}
}

// summary is the last line of text output. A path that could not be read is never "all
// valid": nothing was checked there.
func summary(files, invalid, unreadable int, ds spec.Diagnostics) string {
	errs, warns, infos := 0, 0, 0
	for _, d := range ds {
		switch {
		case d.IsError():
			errs++
		case d.Severity == spec.SeverityWarning:
			warns++
		default:
			infos++
		}
	}
	s := fmt.Sprintf("%s checked", plural(files, "file"))
	switch {
	case invalid > 0 || errs > 0:
		s += fmt.Sprintf(", %d invalid (%s)", invalid, plural(errs, "error"))
	case unreadable == 0:
		s += ", all valid"
	}
	if unreadable > 0 {
		s += fmt.Sprintf(", %s not read (see above)", plural(unreadable, "path"))
	}
	if warns > 0 {
		s += fmt.Sprintf(", %s", plural(warns, "warning"))
	}
	if infos > 0 {
		s += fmt.Sprintf(", %s", plural(infos, "note"))
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// countLoadErrs counts the files found that could not be read: they were not checked.
func countLoadErrs(rs []loadResult) int {
	n := 0
	for _, r := range rs {
		if r.err != nil {
			n++
		}
	}
	return n
}
