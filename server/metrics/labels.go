package metrics

import (
	"runtime/debug"
	"slices"
)

// maxLabelNames bounds the values of each name label (workflow, activity) a scrape exports.
//
// How the bound is kept: the values are only ever names written in workflow files — a run's
// `name:` and a step's `activity: plugin.name`, which the spec schema restricts to short
// identifiers — never run or workflow ids, inputs, or error texts. Their number is the number of
// workflows and activities deployed, not of runs. A store that holds more distinct names than
// this (say, specs generated per request and started over the API) exports the first ones in
// sorted order and sums the rest under otherName, so a scrape's series stay bounded whatever
// the store holds.
const maxLabelNames = 100

// otherName labels what the bound folds together. Workflow names start with a letter or a
// digit and activity names hold a dot, so it cannot be a real name.
const otherName = "_other"

// nameBound maps the names a scrape found to the label values it exports.
type nameBound map[string]string

func boundNames(names map[string]bool) nameBound {
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	b := make(nameBound, len(sorted))
	for i, n := range sorted {
		if i < maxLabelNames {
			b[n] = n
		} else {
			b[n] = otherName
		}
	}
	return b
}

func (b nameBound) label(name string) string {
	if v, ok := b[name]; ok {
		return v
	}
	return otherName
}

// buildInfo is the label values of wend_build_info: version (the release's, else the module's,
// else "devel"), the Go version and the VCS revision the binary was built from ("" unknown).
func buildInfo(release string, info *debug.BuildInfo, ok bool) (version, goVersion, revision string) {
	version, goVersion = release, "unknown"
	if ok {
		goVersion = info.GoVersion
		if version == "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	if version == "" {
		version = "devel"
	}
	return version, goVersion, revision
}
