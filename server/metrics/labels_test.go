package metrics

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMetricsBuildInfo: /metrics says which build serves it.
func TestMetricsBuildInfo(t *testing.T) {
	f := newFixture(t)
	body := f.body()
	re := regexp.MustCompile(`(?m)^wend_build_info\{goversion="go[^"]+",revision="[^"]*",version="[^"]+"\} 1$`)
	if !re.MatchString(body) {
		t.Errorf("no wend_build_info sample with version, goversion and revision in:\n%s", grepLines(body, "wend_build_info"))
	}
}

func TestBuildInfoLabels(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}}}
	devel := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	for _, c := range []struct {
		name, release       string
		info                *debug.BuildInfo
		ok                  bool
		version, goV, revis string
	}{
		{"release stamp wins", "v1.2.3", info, true, "v1.2.3", "go1.26.8", "abc123"},
		{"module version", "", info, true, "v0.3.0", "go1.26.8", "abc123"},
		{"devel build", "", devel, true, "devel", "go1.26.8", ""},
		{"no build info", "", nil, false, "devel", "unknown", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, g, r := buildInfo(c.release, c.info, c.ok)
			if v != c.version || g != c.goV || r != c.revis {
				t.Errorf("buildInfo = %q, %q, %q; want %q, %q, %q", v, g, r, c.version, c.goV, c.revis)
			}
		})
	}
}

// TestMetricsHelpWithoutGoIdentifiers: a HELP text is read by people on a dashboard;
// it said "firstNonEmpty to last event" and "by failure_category".
func TestMetricsHelpWithoutGoIdentifiers(t *testing.T) {
	f := newFixture(t)
	f.start("f1", failSpec)
	f.settle("f1", closed)
	body := f.body()
	ident := regexp.MustCompile(`\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b\w+_\w+|\w+\(\)`)
	seen := 0
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, "# HELP wend_")
		if !ok {
			continue
		}
		seen++
		_, help, _ := strings.Cut(rest, " ")
		if bad := ident.FindString(help); bad != "" {
			t.Errorf("HELP of wend_%s names %q: %s", strings.Fields(rest)[0], bad, help)
		}
	}
	if seen < 10 {
		t.Fatalf("only %d wend HELP lines in:\n%s", seen, body)
	}
}

// TestMetricsLabelsAreNamesNotIds: runs are counted by workflow name and activity
// name, never by workflow or run id, so the series do not grow with the runs.
func TestMetricsLabelsAreNamesNotIds(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 5 {
		r := f.start(fmt.Sprintf("order-%d", i), failSpec)
		ids = append(ids, r.WorkflowID, r.RunID)
		f.settle(r.WorkflowID, closed)
	}
	got := f.scrape()
	if n := got[`wend_runs{status="failed",workflow="failing"}`]; n != 5 {
		t.Errorf(`wend_runs{status="failed",workflow="failing"} = %v, want 5`, n)
	}
	if n := got[`wend_activities{activity="demo.fail",status="failed"}`]; n != 5 {
		t.Errorf(`wend_activities{activity="demo.fail",status="failed"} = %v, want 5`, n)
	}
	series := 0
	for k := range got {
		if !strings.HasPrefix(k, "wend_") {
			continue
		}
		series++
		for _, id := range ids {
			if strings.Contains(k, `"`+id+`"`) {
				t.Errorf("series %s is labelled by an id", k)
			}
		}
	}
	// Five runs or five hundred: the same series.
	r := f.start("order-5", failSpec)
	f.settle(r.WorkflowID, closed)
	n := 0
	for k := range f.scrape() {
		if strings.HasPrefix(k, "wend_") {
			n++
		}
	}
	if n != series {
		t.Errorf("one more run of the same workflow made %d wend series, was %d", n, series)
	}
}

// TestMetricsNameBound: a store with more workflow names than maxLabelNames exports the
// first ones and folds the rest into _other.
func TestMetricsNameBound(t *testing.T) {
	names := map[string]bool{}
	for i := range maxLabelNames + 50 {
		names[fmt.Sprintf("wf%04d", i)] = true
	}
	b := boundNames(names)
	values := map[string]bool{}
	for n := range names {
		values[b.label(n)] = true
	}
	if len(values) != maxLabelNames+1 || !values[otherName] {
		t.Errorf("%d names became %d label values (want %d, with %s)", len(names), len(values), maxLabelNames+1, otherName)
	}
	if b.label("wf0000") != "wf0000" || b.label(fmt.Sprintf("wf%04d", maxLabelNames)) != otherName {
		t.Errorf("the bound keeps the names in sorted order: wf0000 -> %q, wf%04d -> %q",
			b.label("wf0000"), maxLabelNames, b.label(fmt.Sprintf("wf%04d", maxLabelNames)))
	}
	if b.label("never-seen") != otherName {
		t.Errorf("an unknown name is labelled %q", b.label("never-seen"))
	}
}

func grepLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
