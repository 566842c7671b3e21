package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/sim"
)

// againstBase is the file an open run started with: a and b ran, it waits at wait.
const againstBase = sim.Head + `steps:
  - {id: a, activity: p.echo, with: 1}
  - {id: b, activity: p.echo, with: 2}
  - {id: wait, wait_for_signal: go}
`

// TestValidateAgainstReport: the report line of each kind of change, kept as a golden file,
// for a run whose export is replayed on an edited file through the command itself.
func TestValidateAgainstReport(t *testing.T) {
	s := sim.New(t, againstBase, nil)
	s.RunActivities(sim.Echo)
	doc, err := export.Build(s.Record(), s.Events)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, _ := json.Marshal(doc)
	exp := filepath.Join(dir, "run.json")
	if err := os.WriteFile(exp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	edits := []struct{ name, file string }{
		{"added-after", againstBase + "  - {id: c, activity: p.echo, with: 3}\n"},
		{"not-reached-changed", strings.Replace(againstBase, "go}", "went}", 1)},
		{"removed", strings.Replace(againstBase, "  - {id: b, activity: p.echo, with: 2}\n", "", 1)},
		{"reordered", strings.Replace(againstBase, "  - {id: a, activity: p.echo, with: 1}\n  - {id: b, activity: p.echo, with: 2}\n",
			"  - {id: b, activity: p.echo, with: 2}\n  - {id: a, activity: p.echo, with: 1}\n", 1)},
		{"expression-changed", strings.Replace(againstBase, "with: 2", "with: 20", 1)},
		{"inserted-before", strings.Replace(againstBase, "  - {id: wait", "  - {id: pause, delay: 1m}\n  - {id: wait", 1)},
		{"truncated", sim.Head + "steps:\n  - {id: a, activity: p.echo, with: 1}\n"},
	}
	var report bytes.Buffer
	for _, ed := range edits {
		f := filepath.Join(dir, ed.name+".wend.yaml")
		if err := os.WriteFile(f, []byte(ed.file), 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := runValidate(&env{stdout: &stdout, stderr: &stderr}, []string{"--against", exp, f})
		out := strings.ReplaceAll(stdout.String()+stderr.String(), dir+string(filepath.Separator), "")
		out = strings.ReplaceAll(out, filepath.ToSlash(dir)+"/", "")
		out = strings.ReplaceAll(out, s.Record().RunID, "RUN")
		report.WriteString("== " + ed.name + " (exit " + string(rune('0'+code)) + ")\n" + out)
	}
	goldenFile(t, "validate_against.golden", report.Bytes())
}

// FuzzReadExportHistory: an --against export is hostile input; whatever its bytes, reading it
// never panics, and one it accepts passed the integrity check and starts with WorkflowStarted.
func FuzzReadExportHistory(f *testing.F) {
	s := sim.New(f, againstBase, nil)
	s.RunActivities(sim.Echo)
	doc, err := export.Build(s.Record(), s.Events)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(doc)
	f.Add(good)
	// A moved run's export: its replay reads the text WorkflowMigrated carries.
	moved := againstBase + "  - {id: c, activity: p.echo, with: 3}\n"
	evs := append([]history.Event(nil), s.Events...)
	evs = append(evs, history.Event{Seq: uint64(len(evs) + 1), Type: history.WorkflowMigrated, Time: evs[len(evs)-1].Time,
		Data: history.MustData(history.Migration{FromSHA256: history.SpecSHA256([]byte(againstBase)), ToSHA256: history.SpecSHA256([]byte(moved)), SpecSource: moved})})
	rec := s.Record()
	rec.LastSeq, rec.SpecSHA256 = uint64(len(evs)), history.SpecSHA256([]byte(moved))
	if mdoc, err := export.Build(rec, evs); err == nil {
		b, _ := json.Marshal(mdoc)
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"schema":"wend.history-export/v1","history_events":[{"seq":1,"type":"WorkflowStarted","data":{}}]}`))
	f.Add([]byte(`[`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "x.json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		h, _, err := readExportHistory(p)
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(h.events) == 0 || h.events[0].Type != "WorkflowStarted" {
			t.Fatalf("accepted an export whose history does not start with WorkflowStarted: %d events", len(h.events))
		}
	})
}
