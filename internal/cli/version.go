package cli

import (
	"fmt"
	"runtime/debug"
)

// version is set at release time with -ldflags "-X github.com/wendflow/wend/internal/cli.version=v1.2.3".
var version = ""

var versionCmd = &command{
	summary: "print the version of wend and of the spec language it reads",
	usage:   "Usage: wend version\n\nPrints wend's version, the VCS revision it was built from when known, and the\nworkflow spec version it reads (v1).\n",
	run: func(e *env, args []string) int {
		if len(args) > 0 {
			return usageError(e, "version", "unexpected argument %q", args[0])
		}
		fmt.Fprintf(e.stdout, "wend %s (spec v1, %s)\n", buildVersion(), goVersion())
		return exitOK
	},
}

func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}

func goVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.GoVersion
	}
	return "go"
}
