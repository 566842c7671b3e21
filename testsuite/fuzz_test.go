package testsuite

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wendflow/wend/spec"
)

// FuzzTestFile feeds arbitrary bytes through the whole pipeline a test file takes: decoding,
// reference checks against a workflow, playing the cases and checking expectations. Test
// files come from whoever writes the repository: nothing may panic, and a refused file
// says where.
// fmtError matches what fmt writes for a format mistake (%!s(MISSING), %!(EXTRA ...), ...). A
// finding that quotes the file's own text may carry such bytes when the file has them (a key
// "0%!s(x)"); only then is one not a mistake of ours.
var fmtError = regexp.MustCompile(`%!([a-zA-Z]?\(|\(EXTRA|\(NOVERB|\(BAD)`)

func FuzzTestFile(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*" + Suffix)
	ex, _ := filepath.Glob("../examples/*" + Suffix)
	for _, s := range append(seeds, ex...) {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("workflow: ./w.wend.yaml\ncases: [{name: a, mocks: [{activity: p.x, when: 'input.a[0] > 1', results: [{error: {}}, {timeout: true, takes: 1d}]}], signals: [{name: s, after: one}], expect: {calls: [p.x], events: [X]}}]\n"))
	wf := "wend: v1\nname: w\nplugins: {p: ./p}\nsteps:\n  - id: one\n    activity: p.x\n    retry: {tries: 3, backoff: [1s]}\n  - id: wait\n    wait_for_signal: s\n    timeout: 1h\n"
	w, ds := spec.Load("w.wend.yaml", []byte(wf))
	if ds.HasErrors() {
		f.Fatal(ds.Error())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, ds := Decode("t.wend.test.yaml", data)
		if file == nil {
			if !ds.HasErrors() {
				t.Fatal("refused without a finding")
			}
			for _, d := range ds {
				if d.File != "t.wend.test.yaml" || d.Message == "" || fmtError.MatchString(d.Message) && !fmtError.Match(data) {
					t.Fatalf("bad finding %+v", d)
				}
			}
			return
		}
		if len(file.checkRefs(w)) > 0 {
			return
		}
		for _, c := range file.Cases {
			o := Play(file, c, w, &spec.Loader{})
			Check(&c.Expect, o)
			Timeline(o)
		}
	})
}
