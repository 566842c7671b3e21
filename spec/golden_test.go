package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func isWholeFile(msg string) bool {
	switch {
	case strings.HasPrefix(msg, "file is empty;"), strings.HasPrefix(msg, "file has no content;"):
		return true
	case strings.HasPrefix(msg, "file is ") && strings.Contains(msg, "-byte limit"):
		return true
	}
	return false
}

// maxDiagnosticsPerMistake is how many findings one mistake may produce before it counts as a
// cascade: each golden case holds exactly one mistake.
const maxDiagnosticsPerMistake = 3

// TestGolden loads each testdata/invalid/NAME.wend.yaml (one mistake each) and compares its
// diagnostics with NAME.golden. UPDATE=1 rewrites the golden files.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.wend.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 45 {
		t.Fatalf("found %d invalid cases, want at least 45", len(files))
	}
	update := os.Getenv("UPDATE") != ""
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".wend.yaml")
		t.Run(name, func(t *testing.T) {
			_, ds, err := new(Loader).LoadFile(file)
			if err != nil {
				t.Fatalf("LoadFile: %v", err)
			}
			checkOneMistake(t, ds)
			got := formatDiagnostics(ds)
			golden := strings.TrimSuffix(file, ".wend.yaml") + ".golden"
			if update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run UPDATE=1 go test ./spec -run Golden to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("diagnostics differ from %s (UPDATE=1 rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// TestGoldenFilesHaveCases catches a golden file left behind by a renamed or removed case.
func TestGoldenFilesHaveCases(t *testing.T) {
	goldens, err := filepath.Glob("testdata/invalid/*.golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		if _, err := os.Stat(strings.TrimSuffix(g, ".golden") + ".wend.yaml"); err != nil {
			t.Errorf("%s has no case: %v", g, err)
		}
	}
}

// checkOneMistake asserts what every invalid case must give: at least one error, a position
// on every finding about part of the file, a file name and message on each, and no cascade.
func checkOneMistake(t *testing.T, ds Diagnostics) {
	t.Helper()
	if !ds.HasErrors() {
		t.Fatalf("no error reported; diagnostics: %v", ds)
	}
	if len(ds) > maxDiagnosticsPerMistake {
		t.Errorf("one mistake gave %d diagnostics (cascade), want at most %d:\n%s", len(ds), maxDiagnosticsPerMistake, ds.Error())
	}
	checkPositions(t, ds)
}

// checkPositions asserts every diagnostic names its file, says something, and has a line
// unless it is about the whole file.
func checkPositions(t *testing.T, ds Diagnostics) {
	t.Helper()
	for _, d := range ds {
		if d.File == "" {
			t.Errorf("diagnostic without a file: %#v", d)
		}
		if strings.TrimSpace(d.Message) == "" {
			t.Errorf("diagnostic without a message: %#v", d)
		}
		if strings.Contains(d.Message, "\n") {
			t.Errorf("diagnostic message spans lines: %q", d.Message)
		}
		if d.Line <= 0 && !isWholeFile(d.Message) {
			t.Errorf("diagnostic without a line: %s", d)
		}
		if d.Line < 0 || d.Column < 0 {
			t.Errorf("negative position: %#v", d)
		}
	}
}

func formatDiagnostics(ds Diagnostics) []byte {
	var b bytes.Buffer
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestExamplesValid loads every example workflow: each must have no diagnostics at all,
// neither from the schema nor from the semantic checks (run_workflow children included).
func TestExamplesValid(t *testing.T) {
	files, err := filepath.Glob("../examples/*.wend.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d examples, want at least 5", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			w, ds, err := new(Loader).LoadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) > 0 {
				t.Fatalf("want no diagnostics, got:\n%s", ds.Error())
			}
			if w == nil || w.Name == "" || len(w.Steps) == 0 {
				t.Fatalf("example decoded to an empty workflow: %+v", w)
			}
		})
	}
}

// TestLoadDeterministic loads every invalid case twice with fresh loaders and once more
// with a shared one: the findings must be identical and sorted each time.
func TestLoadDeterministic(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.wend.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shared := new(Loader)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var runs []string
			for _, l := range []*Loader{new(Loader), new(Loader), shared} {
				_, ds, err := l.LoadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ds, ds.Sorted()) {
					t.Errorf("diagnostics not sorted:\n%s", ds.Error())
				}
				runs = append(runs, ds.Error())
			}
			for i := 1; i < len(runs); i++ {
				if runs[i] != runs[0] {
					t.Errorf("run %d differs:\n%s\nfirst run:\n%s", i, runs[i], runs[0])
				}
			}
		})
	}
}
