package commands

import (
	"fmt"
	"runtime/debug"
)

// version, commit and date are set by scripts/release with -ldflags "-X
// github.com/wendflow/wend/internal/commands.version=v1.2.3" (and .commit, .date); a build without
// them reads what the Go toolchain stamped instead.
var version, commit, date = "", "", ""

var versionCmd = &command{
	summary: "print the version of wend and of the spec language it reads",
	usage:   "Usage: wend version\n\nPrints wend's version (a release's version, commit and date; the tag it was installed\nat with go install; else the VCS revision it was built from, -dirty when the tree had changes), the workflow spec version it reads (v1)\nand the Go version.\n",
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
		if commit != "" {
			return version + " " + commit + " " + date
		}
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(info)
}

// versionOf reads the version from build info: the module version when wend was installed
// with `go install github.com/wendflow/wend/cmd/wend@v0.5.0` (a tag: the version is all
// there is to say), else "devel" with the VCS revision a `go build` in a checkout stamps,
// marked "-dirty" when the tree had uncommitted changes.
func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v != "" && v != "(devel)" {
		return v
	}
	v = "devel"
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev
		if dirty {
			v += "-dirty"
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
