package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Targets CheckTarget knows: where a workflow is meant to run.
const (
	TargetLocal    = "local"    // wend's own engine on this machine: nothing to add
	TargetTemporal = "temporal" // a Temporal cluster through wend workers
)

// Targets lists the accepted targets, for messages.
var Targets = []string{TargetLocal, TargetTemporal}

// CheckTarget reports what in a valid workflow cannot run on target, or runs differently
// there than on this machine: errors block a start, warnings and infos explain. The file is
// named as w.File; positions are the offending step's or plugin's.
func CheckTarget(w *Workflow, target string) Diagnostics {
	if w == nil || target != TargetTemporal {
		return nil
	}
	var ds Diagnostics
	add := func(sev string, pos Pos, path, format string, args ...any) {
		ds = append(ds, Diagnostic{File: w.File, Line: pos.Line, Column: pos.Col, Path: path,
			Message: fmt.Sprintf(format, args...), Severity: sev})
	}
	dir := filepath.Dir(w.File)
	for _, name := range w.PluginOrder {
		p := w.Plugins[name]
		if p == nil || len(p.Command) == 0 {
			continue
		}
		if rel := relativeProgram(dir, p.Command); rel != "" && p.SHA256 == "" {
			add(SeverityWarning, p.Pos, "plugins."+name,
				"on Temporal %s runs on each worker from that worker's copy of the workflow's folder; pin it with sha256 so every worker runs the same program", rel)
		}
		for _, v := range p.Env {
			if !strings.Contains(v, "=") {
				add(SeverityWarning, p.Pos, "plugins."+name+".env",
					"on Temporal %s is read from the environment of the worker that runs the activity, not of 'wend run'; set it on every worker (or write NAME=VALUE)", v)
			}
		}
	}
	for _, name := range w.LimitOrder {
		add(SeverityWarning, w.Limits[name].Pos, limitPath(name),
			"on Temporal the limit on %s is not enforced: the workers' --max-activities bounds their calls, and Temporal's task queue rate limits bound a whole queue, not one activity", name)
	}
	if cc := w.Concurrency; cc != nil {
		add(SeverityWarning, cc.Pos, "concurrency",
			"on Temporal the concurrency key is not enforced: every run starts at once, whatever runs of its key are open; bound them with a workflow id per key (a second start of an open id is refused) or run this workflow on wend's own engine")
	}
	for i, sc := range w.Schedules {
		add(SeverityInfo, sc.Pos, fmt.Sprintf("schedules[%d]", i),
			"schedule %s is fired by 'wend serve' from its database, not by the Temporal cluster; on Temporal create a Temporal schedule that starts wend.v1", sc.ID)
	}
	for _, name := range w.SearchOrder {
		f := w.Search[name]
		add(SeverityInfo, f.Pos, "search."+name,
			"on Temporal the search field %s is kept in the custom search attribute %s, which the namespace must have: register it once with '%s' (add --namespace for another than default); runs started before it is registered keep no value",
			name, TemporalSearchAttribute(name), TemporalSearchCreate(f))
	}
	if w.Retention.IsSet() {
		add(SeverityInfo, w.Retention.Pos, "retention",
			"retention is applied by 'wend serve' to its database; on Temporal the namespace's retention period deletes closed runs")
	}
	w.Walk(func(s *Step) {
		switch s.Kind {
		case KindRunWorkflow:
			if s.RunWorkflow == "" {
				return
			}
			if _, err := os.Stat(ChildPath(w.File, s.RunWorkflow)); err != nil {
				add(SeverityError, s.Pos, s.Path+".run_workflow",
					"on Temporal the text of every run_workflow file travels in the run's start input, and %s cannot be read (%v)", s.RunWorkflow, unwrapPathError(err))
			}
		case KindForEach:
			if s.Shard <= 0 {
				return
			}
			per := MinEvents(s.Steps)
			if need := temporalEventsPerWendEvent * float64(s.Shard*per+shardChildOverhead); need > temporalChildEvents {
				add(SeverityWarning, s.Pos, s.Path+".shard",
					"on Temporal a shard child records about %.1f Temporal events per wend event, so %d items need about %.0f, past the %.0f at which the child fails with structural_limit; use shard: %d or less there",
					temporalEventsPerWendEvent, s.Shard, need, temporalChildEvents, int((temporalChildEvents/temporalEventsPerWendEvent-shardChildOverhead)/float64(per)))
			}
		case KindWaitForWorkflow:
			add(SeverityInfo, s.Pos, s.Path,
				"on Temporal this wait holds one of a worker's activity slots (wend worker --max-activities) until the other run closes")
		}
	})
	return ds.Sorted()
}

// Temporal's history: about 2.5 of its events per wend event (README, Running on Temporal), and
// the driver fails a run at 95 % of Temporal's 51,200 (temporal/driver/limits.go).
const (
	temporalEventsPerWendEvent = 2.5
	temporalChildEvents        = 0.95 * 51_200
)

// relativeProgram returns the program a plugin command runs from a path relative to the
// workflow's folder: the command itself ("./bin/plugin"), or the first argument naming a
// file there (the script of ["python3", "plugin.py"]); "" when there is none.
func relativeProgram(dir string, command []string) string {
	if c := command[0]; !filepath.IsAbs(c) && strings.ContainsRune(c, filepath.Separator) {
		return c
	}
	for _, a := range command[1:] {
		if a == "" || strings.HasPrefix(a, "-") || filepath.IsAbs(a) {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, a)); err == nil && st.Mode().IsRegular() {
			return a
		}
	}
	return ""
}
