package spec

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuzzSeed keeps the seed corpus to inputs the fuzzer can mutate quickly; the big bad
// inputs (40,000 keys, 1 MiB) are TestBadInput's.
const maxFuzzSeed = 64 << 10

// FuzzParse loads arbitrary bytes as a workflow file (docs/reliability.md H6). It must never panic,
// and every finding must name its file, say something on one line, and have a line unless it
// is about the whole file. Crashers go to testdata/fuzz/FuzzParse and stay there as seeds.
//
//	go test ./spec -run '^$' -fuzz '^FuzzParse$' -fuzztime 3m
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"../examples/*.wend.yaml", "../examples/*.wend.yml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			addSeedFile(f, file)
		}
	}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == filepath.Join("testdata", "fuzz") {
			return filepath.SkipDir // the fuzzer's own corpus is added by the testing package
		}
		if !d.IsDir() && strings.Contains(d.Name(), ".wend.y") {
			addSeedFile(f, path)
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, tc := range badInputs() {
		if len(tc.data) <= maxFuzzSeed {
			f.Add(tc.data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.wend.yaml"
		// Children (run_workflow) never exist, so the fuzzer cannot read the disk.
		l := &Loader{ReadFile: func(path string) ([]byte, error) {
			if filepath.Base(path) == name {
				return data, nil
			}
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}}
		_, ds, err := l.LoadFile(name)
		if err != nil {
			t.Fatalf("LoadFile: %v", err)
		}
		for _, d := range ds {
			if d.File == "" {
				t.Errorf("finding without a file: %#v", d)
			}
			if strings.TrimSpace(d.Message) == "" {
				t.Errorf("finding without a message: %#v", d)
			}
			if strings.Contains(d.Message, "\n") {
				t.Errorf("finding spans lines: %q", d.Message)
			}
			if d.Line <= 0 && !isWholeFile(d.Message) {
				t.Errorf("finding without a line: %s", d)
			}
			if d.Severity != SeverityError && d.Severity != SeverityWarning {
				t.Errorf("finding with severity %q: %s", d.Severity, d)
			}
		}
	})
}

func addSeedFile(f *testing.F, path string) {
	f.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	if len(data) <= maxFuzzSeed {
		f.Add(data)
	}
}
