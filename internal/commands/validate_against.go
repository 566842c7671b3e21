package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/internal/inputfile"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/spec"
)

// listFlag is a flag given once per value (--against a.json --against b.json).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// openHistory is the history of one open run that validate --against replays on a new file.
type openHistory struct {
	workflowID, runID, name string
	from                    string // the database or export file it came from
	events                  []history.Event
}

// runVerdict is what replaying one open run on a new file found.
type runVerdict struct {
	run  openHistory
	file string             // the new workflow file
	d    *engine.Divergence // nil: the new file takes the same decisions
	w    *spec.Workflow     // the new file
	old  *spec.Workflow     // the run's recorded spec (nil when it does not load)
}

// collectHistories reads the open runs of the named workflows from each --against source: a
// history export (JSON, as wend history ID --output or GET /v1/runs/ID/export writes it), a
// folder of them (its *.json files), or a wend database (read through its holder's control
// socket when wend serve holds it). A source that cannot be read is an error naming it.
func collectHistories(e *env, sources []string, names map[string]bool) ([]openHistory, error) {
	sources, err := expandSources(sources)
	if err != nil {
		return nil, err
	}
	var out []openHistory
	for _, src := range sources {
		if src == againstCluster {
			hs, err := clusterHistories(e, names)
			if err != nil {
				return nil, err
			}
			out = append(out, hs...)
			continue
		}
		isExport, err := looksLikeExport(src)
		if err != nil {
			return nil, err
		}
		if isExport {
			h, open, err := readExportHistory(src)
			if err != nil {
				return nil, err
			}
			if open && names[h.name] {
				out = append(out, h)
			}
			continue
		}
		hs, err := dbHistories(e, src, names)
		if err != nil {
			return nil, err
		}
		out = append(out, hs...)
	}
	return out, nil
}

// expandSources replaces each folder among the --against sources by the history exports in
// it (its *.json files, not its subfolders', in name order), so a pre-commit hook can name a
// folder its exports are kept in; a folder with none adds no run. A workflow file given as a
// source is refused: it is what a hook left without its exports folder passes.
func expandSources(sources []string) ([]string, error) {
	var out []string
	for _, src := range sources {
		if src == againstCluster {
			out = append(out, src)
			continue
		}
		if strings.HasSuffix(src, ".wend.yaml") || strings.HasSuffix(src, ".wend.yml") {
			return nil, fmt.Errorf("--against %s: that is a workflow file; --against names a wend database, a history export or a folder of exports (the wend-validate-against hook takes it as args: [FOLDER])", src)
		}
		fi, err := os.Stat(src)
		if err != nil || !fi.IsDir() {
			out = append(out, src) // read, and any error named, as a file
			continue
		}
		exports, err := filepath.Glob(filepath.Join(src, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("--against %s: %w", src, err)
		}
		sort.Strings(exports)
		for _, e := range exports {
			// A FIFO or a link to a device named *.json is passed over, never opened.
			if inputfile.IsRegular(e) {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// looksLikeExport tells an export (JSON text) from a database (a bbolt file) by its first byte.
func looksLikeExport(path string) (bool, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return false, fmt.Errorf("--against %s: %w; name a wend database or a history export (wend history ID --output FILE)", path, err)
	}
	defer f.Close()
	var head [64]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("--against %s: %w", path, err)
	}
	t := bytes.TrimLeft(head[:n], " \t\r\n")
	return len(t) > 0 && t[0] == '{', nil
}

// readsCluster reports whether validate's arguments name the cluster as an --against source
// (--against temporal): only then do the cluster flags (or WEND_TEMPORAL) reach validate, which
// otherwise never opens the network.
func readsCluster(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return false
		}
		name, value, hasValue := flagParts(a)
		if name != "against" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		if value == againstCluster {
			return true
		}
	}
	return false
}

// readExportHistory reads and verifies a history export: it is hostile input, so it goes
// through wend check --export's checks (size bound, schema, integrity checksum, the history's
// rules) before its events are replayed on anything. open reports whether the run had not
// closed when it was exported.
func readExportHistory(path string) (h openHistory, open bool, err error) {
	v, err := checkExport(path)
	if err != nil {
		return h, false, fmt.Errorf("--against %s: %w", path, err)
	}
	if len(v.Problems) > 0 {
		return h, false, fmt.Errorf("--against %s: not a sound history export: %s; see wend check --export %s", path, v.Problems[0], path)
	}
	b, err := inputfile.Read(path, maxExportBytes)
	if err != nil {
		return h, false, fmt.Errorf("--against %s: %w", path, err)
	}
	var doc export.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return h, false, fmt.Errorf("--against %s: %w", path, err)
	}
	return fromExport(&doc, path), history.Run{Status: doc.Workflow.Status}.Open(), nil
}

func fromExport(doc *export.Document, from string) openHistory {
	evs := make([]history.Event, len(doc.HistoryEvents))
	for i, e := range doc.HistoryEvents {
		evs[i] = history.Event{Seq: e.Seq, Type: history.EventType(e.Type), Time: e.Time, Step: e.Step,
			ActivityExecutionID: e.ActivityExecutionID, Attempt: e.Attempt, Data: e.Data}
	}
	return openHistory{workflowID: doc.Workflow.WorkflowID, runID: doc.Workflow.RunID, name: doc.Workflow.Name, from: from, events: evs}
}

// dbHistories exports the open runs of the named workflows from a database, as wend list and
// wend history read it: the file itself when no process holds it (it is not created when
// missing), else through the holder's control socket.
func dbHistories(e *env, path string, names map[string]bool) ([]openHistory, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("--against %s: %w", path, err)
	}
	b, err := openBackend(e, path, readRuns)
	if err != nil {
		return nil, fmt.Errorf("--against %s: %w", path, err)
	}
	defer b.Close()
	return backendHistories(b, path, names)
}

// againstCluster is the --against source that names the Temporal cluster of --temporal (or
// WEND_TEMPORAL); a file of that name is given as ./temporal.
const againstCluster = "temporal"

// clusterHistories exports the open runs of the named workflows from the Temporal cluster
// the command line names, as wend list and wend history --temporal read them.
func clusterHistories(e *env, names map[string]bool) ([]openHistory, error) {
	if e.temporal == nil {
		return nil, fmt.Errorf("--against temporal reads the open runs of a Temporal cluster: name it with --temporal HOST:PORT (or WEND_TEMPORAL); a file named temporal is ./temporal")
	}
	b, err := e.openTemporal()
	if err != nil {
		return nil, fmt.Errorf("--against temporal: %w", err)
	}
	defer b.Close()
	return backendHistories(b, "Temporal "+e.temporal.Address+" (namespace "+e.temporal.Namespace+")", names)
}

// backendHistories exports the open runs of the named workflows through b; from names b in
// messages.
func backendHistories(b backend, from string, names map[string]bool) ([]openHistory, error) {
	var out []openHistory
	for _, name := range sortedKeys(names) {
		runs, err := b.List(api.ListQuery{Name: name}, 0)
		if err != nil {
			return nil, fmt.Errorf("--against %s: list the runs of %s: %w", from, name, err)
		}
		for _, r := range runs {
			if !r.Open() || r.NeverStarted() {
				continue
			}
			doc, err := b.Export(r.RunID)
			if err != nil {
				return nil, fmt.Errorf("--against %s: read run %s of %s: %w", from, r.RunID, r.WorkflowID, err)
			}
			out = append(out, fromExport(doc, from))
		}
	}
	return out, nil
}

// replayOn replays a run's history on the new file w.
func replayOn(h openHistory, file string, w *spec.Workflow) (runVerdict, error) {
	v := runVerdict{run: h, file: file, w: w}
	if len(h.events) > 0 {
		if st, err := history.DataOf[history.Started](h.events[0]); err == nil && st.SpecSource != "" {
			if old, ds := (&spec.Loader{SkipChildren: true}).Load(st.SpecFile, []byte(st.SpecSource)); !ds.HasErrors() {
				v.old = old
			}
		}
	}
	d, err := engine.Diverge(w, h.events)
	if err != nil {
		return v, fmt.Errorf("run %s of %s (from %s): %w", h.runID, h.workflowID, h.from, err)
	}
	v.d = d
	return v, nil
}

// String is the report line of one run.
func (v runVerdict) String() string {
	head := fmt.Sprintf("%s (run %s): ", v.run.workflowID, v.run.runID)
	if v.d == nil {
		return head + "holds: " + filepath.ToSlash(v.file) + " takes the same decisions on its history so far"
	}
	path := v.d.Step
	if v.d.At != "" && v.d.Recorded == "" {
		path = v.d.At
	}
	var where string
	if s := v.w.StepAt(history.StaticStepPath(path)); s != nil {
		where = fmt.Sprintf("step %s at %s:%d:%d", runview.StepName(path, v.w.StepIDs()), filepath.ToSlash(v.file), s.Pos.Line, max(s.Pos.Col, 1))
		if v.old != nil && v.old.StepAt(history.StaticStepPath(path)) != nil {
			if was := runview.StepName(path, v.old.StepIDs()); was != runview.StepName(path, v.w.StepIDs()) {
				where += fmt.Sprintf(" (where the run had step %s)", was)
			}
		}
	} else if v.old != nil && v.old.StepAt(history.StaticStepPath(path)) != nil {
		where = fmt.Sprintf("step %s, which %s no longer has", runview.StepName(path, v.old.StepIDs()), filepath.ToSlash(v.file))
	} else if path != "" {
		where = "step " + path
	} else {
		where = "the workflow"
	}
	if v.d.At != "" && v.d.At != path {
		where += fmt.Sprintf(" (the new file decides at step %s)", runview.StepName(v.d.At, v.w.StepIDs()))
	}
	return fmt.Sprintf("%sbreaks at event %d, %s: %s", head, v.d.Seq, where, v.d.Reason)
}

// againstSummary is the one line said after the runs, whatever they found.
func againstSummary(checked, broken int) string {
	if checked == 0 {
		return "validate --against: no open run of these workflows; nothing to break"
	}
	runs := "runs"
	if checked == 1 {
		runs = "run"
	}
	return fmt.Sprintf("validate --against: %d open %s checked: %d hold, %d would break", checked, runs, checked-broken, broken)
}

// validateAgainst is validate --against, once every file is valid: each open run of each
// file's workflow replayed on the file, one line per run, and a summary.
func validateAgainst(e *env, sources, files []string, results []loadResult) int {
	byName := map[string][]int{}
	for i, r := range results {
		if r.w != nil {
			byName[r.w.Name] = append(byName[r.w.Name], i)
		}
	}
	names := map[string]bool{}
	for n := range byName {
		names[n] = true
	}
	hs, err := collectHistories(e, sources, names)
	if err != nil {
		fmt.Fprintf(e.stderr, "wend validate: %v\n", err)
		return exitUsage
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].workflowID != hs[j].workflowID {
			return hs[i].workflowID < hs[j].workflowID
		}
		return hs[i].runID < hs[j].runID
	})
	checked, broken := 0, 0
	seen := map[string]bool{} // a run given twice (a database and its export) is said once
	for _, h := range hs {
		for _, i := range byName[h.name] {
			key := h.runID + "\x00" + files[i]
			if seen[key] {
				continue
			}
			seen[key] = true
			v, err := replayOn(h, files[i], results[i].w)
			if err != nil {
				fmt.Fprintf(e.stderr, "wend validate: %v\n", err)
				return exitUsage
			}
			checked++
			if v.d != nil {
				broken++
			}
			fmt.Fprintln(e.stdout, v.String())
		}
	}
	fmt.Fprintln(e.stderr, againstSummary(checked, broken))
	if broken > 0 {
		return exitFailed
	}
	return exitOK
}
