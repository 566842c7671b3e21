package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTargetTemporal: each finding of --target temporal, and none for the local
// target. A run_workflow file that is gone is an error there (its text must travel in the
// start input); the Loader skips children when a run resumes from recorded text, so this
// check is what catches it for such callers.
func TestCheckTargetTemporal(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "child.wend.yaml"), []byte("wend: v1\nname: c\nsteps: [{delay: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body string
		want       []string // "severity path" of each finding, in order
	}{
		{"clean", "plugins:\n  p: {command: [/usr/bin/p]}\nsteps:\n  - activity: p.x\n", nil},
		{"missing child", "steps:\n  - run_workflow: ./gone.wend.yaml\n", []string{"error steps[0].run_workflow"}},
		{"present child", "steps:\n  - run_workflow: ./child.wend.yaml\n", nil},
		{"relative unpinned", "plugins:\n  p: ./p\nsteps:\n  - activity: p.x\n", []string{"warning plugins.p"}},
		{"relative pinned", "plugins:\n  p: {command: [./p], sha256: " + strings.Repeat("ab", 32) + "}\nsteps:\n  - activity: p.x\n", nil},
		{"env passthrough", "plugins:\n  p: {command: [/usr/bin/p], env: [TOKEN, A=b]}\nsteps:\n  - activity: p.x\n", []string{"warning plugins.p.env"}},
		{"wait for workflow", "steps:\n  - wait_for_workflow: other\n", []string{"info steps[0]"}},
		{"schedules", "schedules:\n  - {id: a, every: 1h}\n  - {id: b, cron: \"@daily\"}\nsteps:\n  - delay: 1s\n", []string{"info schedules[0]", "info schedules[1]"}},
		{"concurrency key", "concurrency: {key: \"${{ input.customer }}\", limit: 2}\nsteps:\n  - delay: 1s\n", []string{"warning concurrency"}},
		{"shard too big for Temporal", "plugins:\n  p: /usr/bin/p\nsteps:\n  - for_each: \"${{ input.l }}\"\n    shard: 10000\n    steps: [{activity: p.x}]\n",
			[]string{"warning steps[0].shard"}},
		{"search fields", "search:\n  customer: {type: string, value: \"${{ input.c }}\"}\n  amount: {type: number, value: \"${{ state.t }}\"}\nsteps:\n  - delay: 1s\n",
			[]string{"info search.customer", "info search.amount"}},
		{"shard that fits Temporal", "plugins:\n  p: /usr/bin/p\nsteps:\n  - for_each: \"${{ input.l }}\"\n    shard: 9000\n    steps: [{activity: p.x}]\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, "w.wend.yaml")
			w, ds := (&Loader{SkipChildren: true}).Load(file, []byte("wend: v1\nname: w\n"+c.body))
			if ds.HasErrors() {
				t.Fatalf("case does not load: %v", ds)
			}
			if got := CheckTarget(w, TargetLocal); len(got) != 0 {
				t.Fatalf("local target found %v", got)
			}
			var got []string
			for _, d := range CheckTarget(w, TargetTemporal) {
				if d.File != file || d.Line == 0 {
					t.Errorf("finding %v does not name its file and line", d)
				}
				got = append(got, d.Severity+" "+d.Path)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("findings %q, want %q", got, c.want)
			}
		})
	}
}

// TestInfoIsNotAnError: an info finding leaves a file valid and prints with its severity.
func TestInfoIsNotAnError(t *testing.T) {
	d := Diagnostic{File: "f", Line: 1, Column: 2, Path: "steps[0]", Message: "m", Severity: SeverityInfo}
	if (Diagnostics{d}).HasErrors() {
		t.Fatal("an info counts as an error")
	}
	if got := d.String(); got != "f:1:2: steps[0]: info: m" {
		t.Fatalf("String = %q", got)
	}
}
