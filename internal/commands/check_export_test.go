package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wendflow/wend/history/export"
	"github.com/wendflow/wend/interpreter/sim"
)

// TestCheckExport: wend check --export verifies a saved export: a sound one
// passes with a replay; an altered event, a lost event, a missing integrity section, a key the
// schema does not know, a consistent forgery the spec's decisions contradict, and a file that is
// not JSON are each reported.
func TestCheckExport(t *testing.T) {
	s := sim.New(t, sim.Head+"steps: [{activity: p.x, with: 1}, {activity: p.y, with: 2}]\n", nil)
	s.RunActivities(sim.Echo)
	doc, err := export.Build(s.Record(), s.Events)
	if err != nil {
		t.Fatal(err)
	}
	resum := func(d *export.Document) {
		sum, err := export.EventsSHA256(d.HistoryEvents)
		if err != nil {
			t.Fatal(err)
		}
		d.Integrity.EventsSHA256 = sum
	}
	for _, tc := range []struct {
		name   string
		mutate func(d *export.Document)
		raw    string // the file, when not the mutated document
		want   string // a problem containing it; "" for none
	}{
		{name: "sound", mutate: func(*export.Document) {}},
		{name: "altered payload", mutate: func(d *export.Document) {
			d.HistoryEvents[len(d.HistoryEvents)-1].Data = json.RawMessage(`{"output":"forged"}`)
		}, want: "do not match integrity.events_sha256"},
		{name: "lost event", mutate: func(d *export.Document) {
			d.HistoryEvents = append(d.HistoryEvents[:2:2], d.HistoryEvents[3:]...)
		}, want: "where 3 was expected"},
		{name: "no integrity", mutate: func(d *export.Document) { d.Integrity = nil }, want: "no integrity section"},
		{name: "forged decision, checksum redone", mutate: func(d *export.Document) {
			for i, e := range d.HistoryEvents {
				if e.Type == "ActivityScheduled" {
					d.HistoryEvents[i].Data = json.RawMessage(strings.Replace(string(e.Data), `"x"`, `"z"`, 1))
					break
				}
			}
			resum(d)
		}, want: "replay through the interpreter"},
		{name: "unknown key", raw: "extra", want: "does not match schemas/history-export.schema.json"},
		{name: "not JSON", raw: "{", want: "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(doc)
			var d export.Document
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if tc.mutate != nil {
				tc.mutate(&d)
			}
			b, _ = json.MarshalIndent(d, "", "  ")
			switch tc.raw {
			case "extra":
				b = append([]byte(`{"extra": 1, `), b[1:]...)
			case "{":
				b = []byte("{")
			}
			path := filepath.Join(t.TempDir(), "export.json")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			v, err := checkExport(path)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(v.Problems, "\n")
			switch {
			case tc.want == "" && (len(v.Problems) > 0 || !v.Replayed):
				t.Fatalf("sound export: problems %q, replayed %v", v.Problems, v.Replayed)
			case tc.want != "" && !strings.Contains(all, tc.want):
				t.Fatalf("problems:\n%s\nwant one containing %q", all, tc.want)
			}
		})
	}
}
