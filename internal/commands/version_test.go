package commands

import (
	"runtime/debug"
	"testing"
)

// TestVersionOfBuildInfo pins what wend version prints for each way wend is built: a tagged
// go install shows the tag, a build in a checkout the revision and whether it was dirty.
func TestVersionOfBuildInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	cases := []struct {
		name     string
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"go install at a tag", "v0.5.0", nil, "v0.5.0"},
		{"go build in a dirty checkout (Go 1.24+ stamps a pseudo-version)", "v0.5.1-0.20261130220000-0123456789ab+dirty", rev, "v0.5.1-0.20261130220000-0123456789ab+dirty"},
		{"go install at a pseudo-version", "v0.5.1-0.20261130220000-0123456789ab", nil, "v0.5.1-0.20261130220000-0123456789ab"},
		{"build in a clean checkout", "(devel)", append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"}), "devel 0123456789ab"},
		{"build in a dirty checkout", "(devel)", append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "devel 0123456789ab-dirty"},
		{"no VCS information (go run, -buildvcs=false)", "(devel)", nil, "devel"},
		{"no main version at all", "", nil, "devel"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/wendflow/wend", Version: tc.main}, Settings: tc.settings}
			if got := versionOf(info); got != tc.want {
				t.Errorf("versionOf = %q, want %q", got, tc.want)
			}
		})
	}
}
