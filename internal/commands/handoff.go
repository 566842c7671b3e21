package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// temporalBinary is the program that answers commands for a Temporal cluster. It is wend
// built with the Temporal SDK (temporal/cmd/wend-temporal, a nested module), kept apart so
// wend itself never links the SDK: a smaller binary, a quicker build, no gRPC client for
// people who never use a cluster. wend finds it beside its own executable or on PATH and
// runs it in its place, git-style (docs/design.md, "Scale-out on Temporal").
const temporalBinary = "wend-temporal"

// buildTemporalHint says how to get wend-temporal from a checkout.
const buildTemporalHint = "build it from the wend repository: cd temporal && go build -o ../wend-temporal ./cmd/wend-temporal (then put it beside wend or on PATH)"

// wantsTemporal reports whether a command line is for a Temporal cluster: `worker`, or an
// engine command given --temporal (or any cluster flag), or one run with WEND_TEMPORAL set
// and no --db. A malformed cluster flag counts too, so wend-temporal reports it.
func wantsTemporal(args []string, getenv func(string) string) bool {
	if len(args) == 0 {
		return false
	}
	if args[0] == "worker" || isHelpWord(args[0]) && len(args) > 1 && args[1] == "worker" {
		return true
	}
	if !isEngineCommand(args[0], args[1:]) || wantsHelp(args[1:]) {
		return false
	}
	t, _, err := temporalTarget(args[1:], getenv)
	return t != nil || err != nil
}

// handoff runs wend-temporal in this process's place, same arguments and environment, so its
// output, exit code and signals are the user's directly (handoff_unix.go: exec; handoff_windows.go:
// a child). Without wend-temporal, `wend help worker` says what the command is and
// where it lives; anything else is refused.
func handoff(e *env, args []string) int {
	path, err := findTemporalBinary()
	if err != nil {
		if isHelpWord(args[0]) {
			fmt.Fprintf(e.stdout, "'wend worker' hosts runs and their plugins for a Temporal cluster. It is a command of the\n"+
				"%s program (wend built with the Temporal SDK), which is not beside wend nor on PATH;\n%s.\n"+
				"Then 'wend help worker' shows its flags. README, Scaling out.\n", temporalBinary, buildTemporalHint)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "wend %s: a Temporal cluster is named (--temporal or WEND_TEMPORAL), and this needs the %s program, which is not beside wend nor on PATH; %s\n",
			args[0], temporalBinary, buildTemporalHint)
		return exitUsage
	}
	return runInstead(e, path, args)
}

func isHelpWord(s string) bool { return s == "help" || s == "-h" || s == "--help" }

// findTemporalBinary looks beside the running executable first (a release unpacks both into
// one folder), then on PATH.
func findTemporalBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		name := temporalBinary
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		p := filepath.Join(filepath.Dir(exe), name)
		// Windows keeps no execute bits: there the name's .exe is what makes it a program.
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && (runtime.GOOS == "windows" || st.Mode()&0o111 != 0) {
			return p, nil
		}
	}
	return exec.LookPath(temporalBinary)
}
