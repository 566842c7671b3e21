package commands

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"regexp"

	"github.com/wendflow/wend/testsuite"
)

var testCmd = &command{
	summary: "run workflow tests (*.wend.test.yaml) with mocked activities in virtual time",
	usage: `Usage: wend test [--json] [--run PATTERN] [--junit FILE] [--coverage] [--plugins] [--allow-none] [PATH...]

Runs the cases of workflow test files through the same interpreter as wend run, with the
activities answered by the cases' mocks and time virtual: delays, timeouts, backoffs and
signal waits take no wall time. No plugin (unless --plugins), database or network is used.
A PATH may be a file or a folder (default .); folders are searched for *.wend.test.yaml
(hidden folders, node_modules and testdata are skipped). See docs/testing.md for the format.

Output: "ok FILE (N cases)" per passing file; for each failed case, every failed
expectation at the file:line:col that states it, expected and actual, then the case's
timeline of events; a summary last.

Flags:
  --run PATTERN  run only the cases whose name matches the regular expression
  --json         print the report as JSON on stdout instead:
                 {"files": [{"file", "findings", "cases": [{"name", "line", "column",
                 "passed", "virtual_duration", "problem", "mismatches", "timeline"}]}],
                 "passed", "failed", "coverage"}
  --junit FILE   also write the results as JUnit XML to FILE
  --coverage     list the steps no case reached and the compensations no case ran
  --plugins      also start the plugins each workflow declares and check that every mocked
                 activity exists and every mocked output matches its declared output
                 schema (a mismatch makes the test file fail)
  --allow-none   exit 0, saying so, when no test file is found (the pre-commit hook's
                 way: a repository may have workflows before it has tests)

Exit codes: 0 all cases passed, 1 a case failed or a test file is invalid, 2 usage or I/O
error (a PATH that does not exist, no test file found, --junit not writable), 70 internal error.
`,
	run: runTest,
}

func runTest(e *env, args []string) int {
	fset := flag.NewFlagSet("test", flag.ContinueOnError)
	asJSON := fset.Bool("json", false, "")
	pattern := fset.String("run", "", "")
	junit := fset.String("junit", "", "")
	coverage := fset.Bool("coverage", false, "")
	withPlugins := fset.Bool("plugins", false, "")
	allowNone := fset.Bool("allow-none", false, "")
	paths, err := parseArgs(fset, args)
	if err != nil {
		return usageError(e, "test", "%s", flagError(err))
	}
	var opt testsuite.Options
	if *pattern != "" {
		if opt.Run, err = regexp.Compile(*pattern); err != nil {
			return usageError(e, "test", "--run: %v", err)
		}
	}
	if *withPlugins {
		opt.Check = newMockChecker(context.Background(), e).check
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	files, err := testsuite.Find(paths)
	if err != nil {
		return ioError(e, err)
	}
	if len(files) == 0 {
		if *allowNone {
			fmt.Fprintf(e.stderr, "wend test: no *%s file under %v: nothing to test\n", testsuite.Suffix, paths)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "wend test: no *%s file under %v\n", testsuite.Suffix, paths)
		return exitUsage
	}
	rep, err := testsuite.Run(files, opt)
	if err != nil {
		return ioError(e, err)
	}
	if !*coverage {
		rep.Coverage = nil
	}
	if *junit != "" {
		if code := writeJUnit(e, rep, *junit); code != exitOK {
			return code
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		rep.WriteText(e.stdout, *coverage)
	}
	if rep.Failed > 0 {
		return exitFailed
	}
	return exitOK
}

func ioError(e *env, err error) int {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	fmt.Fprintf(e.stderr, "wend test: %v\n", err)
	return exitUsage
}

func writeJUnit(e *env, rep *testsuite.Report, path string) int {
	f, err := os.Create(path)
	if err != nil {
		return ioError(e, err)
	}
	werr := rep.WriteJUnit(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return ioError(e, werr)
	}
	return exitOK
}
