package testsuite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/internal/inputfile"
	"github.com/wendflow/wend/spec"
)

// Report is the outcome of a `wend test` run over files.
type Report struct {
	Files    []*FileReport `json:"files"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Coverage []Uncovered   `json:"coverage,omitempty"`
	covered  map[string]*cover
}

// FileReport is one test file: its findings when it cannot run, else its cases.
type FileReport struct {
	File     string           `json:"file"`
	Findings spec.Diagnostics `json:"findings,omitempty"` // the file (or its workflow) is invalid
	Cases    []*CaseReport    `json:"cases,omitempty"`
}

// CaseReport is one case's verdict.
type CaseReport struct {
	Name       string     `json:"name"`
	Line       int        `json:"line"`
	Column     int        `json:"column"`
	Passed     bool       `json:"passed"`
	Duration   string     `json:"virtual_duration"`
	Problem    string     `json:"problem,omitempty"`
	Mismatches []Mismatch `json:"mismatches,omitempty"`
	Timeline   []string   `json:"timeline,omitempty"` // only for failed cases
}

// Uncovered is a step no case reached, or a compensation no case ran.
type Uncovered struct {
	Workflow string `json:"workflow"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Step     string `json:"step"`
	What     string `json:"what"` // step or compensation
}

type cover struct {
	w       *spec.Workflow
	reached map[string]bool // static step paths
	compRan map[string]bool
}

// Options select what Run does.
type Options struct {
	Run *regexp.Regexp // cases whose name matches; nil for all
	// Check, when set, is asked about each test file and its workflow before the cases run;
	// an error among its findings makes the file fail (`wend test --plugins` checks the mocks
	// against the real plugins, which this package does not reach).
	Check func(f *File, w *spec.Workflow) spec.Diagnostics
}

// Find lists the test files under paths (files are taken as given, folders searched, without
// hidden, node_modules and testdata folders), sorted.
func Find(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// testdata holds fixtures (Go's convention), some invalid on purpose.
			if de.IsDir() && path != p && (strings.HasPrefix(de.Name(), ".") || de.Name() == "node_modules" || de.Name() == "testdata") {
				return filepath.SkipDir
			}
			if !de.IsDir() && strings.HasSuffix(de.Name(), Suffix) {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// Run decodes and plays every file. An I/O error (a file that cannot be read) stops it.
func Run(files []string, opt Options) (*Report, error) {
	rep := &Report{covered: map[string]*cover{}}
	loader := &spec.Loader{}
	for _, path := range files {
		data, err := inputfile.Read(path, spec.MaxFileBytes)
		var big *inputfile.TooBigError
		if errors.As(err, &big) {
			rep.Files = append(rep.Files, &FileReport{File: path, Findings: spec.Diagnostics{{File: path, Severity: spec.SeverityError,
				Message: fmt.Sprintf("file is %d bytes, over the %d-byte limit for a test file; split its cases over several test files", big.Size, big.Limit)}}})
			rep.Failed++
			continue
		}
		if err != nil {
			return nil, err
		}
		rep.Files = append(rep.Files, rep.runFile(path, data, loader, opt))
	}
	rep.coverage()
	return rep, nil
}

// RunFile decodes and plays one test file given its content.
func (rep *Report) runFile(path string, data []byte, loader *spec.Loader, opt Options) *FileReport {
	fr := &FileReport{File: path}
	f, ds := Decode(path, data)
	if f == nil {
		fr.Findings = ds
		rep.Failed++
		return fr
	}
	w, wds, err := loader.LoadFile(f.Workflow)
	if err != nil || wds.HasErrors() {
		fr.Findings = spec.Diagnostics{{File: path, Line: f.WFPos.Line, Column: f.WFPos.Col, Path: "workflow",
			Message: workflowProblem(f.Workflow, err, wds), Severity: spec.SeverityError}}
		rep.Failed++
		return fr
	}
	if ds := f.checkRefs(w); len(ds) > 0 {
		fr.Findings = ds
		rep.Failed++
		return fr
	}
	if opt.Check != nil {
		if ds := opt.Check(f, w); ds.HasErrors() {
			fr.Findings = ds
			rep.Failed++
			return fr
		}
	}
	for _, c := range f.Cases {
		if opt.Run != nil && !opt.Run.MatchString(c.Name) {
			continue
		}
		cv := rep.covered[w.File]
		if cv == nil {
			cv = &cover{w: w, reached: map[string]bool{}, compRan: map[string]bool{}}
			rep.covered[w.File] = cv
		}
		o := Play(f, c, w, loader)
		cv.add(o)
		cr := &CaseReport{Name: c.Name, Line: c.Pos.Line, Column: c.Pos.Col, Duration: fmtDuration(o.Duration)}
		if o.Problem != nil {
			cr.Problem = fmt.Sprintf("%s:%d:%d: %s", path, o.Problem.Pos.Line, o.Problem.Pos.Col, o.Problem.Message)
		} else {
			cr.Mismatches = Check(&c.Expect, o)
		}
		cr.Passed = cr.Problem == "" && len(cr.Mismatches) == 0
		if cr.Passed {
			rep.Passed++
		} else {
			rep.Failed++
			cr.Timeline = Timeline(o)
		}
		fr.Cases = append(fr.Cases, cr)
	}
	return fr
}

func workflowProblem(path string, err error, ds spec.Diagnostics) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("workflow %s is invalid (run wend validate %s):\n%s", path, path, ds.Error())
}

// checkRefs reports step references (mocks, signals after, children, expectations) that name
// no step of the workflow: a typo there would make a mock or a trigger silently unused.
func (f *File) checkRefs(w *spec.Workflow) spec.Diagnostics {
	l := newLabels(w)
	known := func(ref string) bool {
		for p := range l.steps {
			if l.matches(ref, p) {
				return true
			}
		}
		return false
	}
	var ds spec.Diagnostics
	bad := func(pos spec.Pos, path, ref string) {
		ds = append(ds, spec.Diagnostic{File: f.Path, Line: pos.Line, Column: pos.Col, Path: path,
			Message: fmt.Sprintf("no step %q in %s", ref, w.File), Severity: spec.SeverityError})
	}
	checkMocks := func(ms []*Mock) {
		for _, m := range ms {
			if m.Step != "" && !known(m.Step) {
				bad(m.Pos, m.Path+".step", m.Step)
			}
		}
	}
	checkMocks(f.Mocks)
	for _, c := range f.Cases {
		checkMocks(c.Mocks)
		for _, t := range append(append([]*Trigger(nil), c.Signals...), c.Cancel, c.Term) {
			if t != nil && t.After != "" {
				f.checkAfter(l, w, t, bad, &ds)
			}
		}
		for _, ch := range c.Children {
			if !known(ch.Step) {
				bad(ch.Pos, ch.Path+".step", ch.Step)
			}
		}
	}
	return ds
}

func (cv *cover) add(o *Outcome) {
	if n := len(o.Events); n > 0 && o.Events[n-1].Type == history.WorkflowContinuedAsNew {
		// WorkflowContinuedAsNew names no step: when the workflow has one continue_as_new
		// step, it is the one that ran.
		var can []*spec.Step
		cv.w.Walk(func(s *spec.Step) {
			if s.Kind == spec.KindContinueAsNew {
				can = append(can, s)
			}
		})
		if len(can) == 1 {
			cv.mark(can[0].Path)
		}
	}
	for _, e := range o.Events {
		if e.Step == "" {
			continue
		}
		p := history.StaticStepPath(e.Step)
		if e.Type == history.CompensationStarted {
			cv.compRan[p] = true
			continue
		}
		cv.mark(p)
	}
}

// mark records a step as reached, and the steps it is inside: a step is reached when it or
// a step inside it recorded anything.
func (cv *cover) mark(p string) {
	for {
		cv.reached[p] = true
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return
		}
		p = p[:i]
	}
}

func (rep *Report) coverage() {
	keys := make([]string, 0, len(rep.covered))
	for k := range rep.covered {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cv := rep.covered[k]
		l := newLabels(cv.w)
		cv.w.Walk(func(s *spec.Step) {
			if !cv.reached[s.Path] {
				rep.Coverage = append(rep.Coverage, Uncovered{Workflow: k, Line: s.Pos.Line, Column: s.Pos.Col, Step: l.label(s.Path), What: "step"})
			}
			if len(s.CompensateWith) > 0 && !cv.compRan[s.Path] {
				rep.Coverage = append(rep.Coverage, Uncovered{Workflow: k, Line: s.Pos.Line, Column: s.Pos.Col, Step: l.label(s.Path), What: "compensation"})
			}
		})
	}
}

// checkAfter requires `after:` to name a step that records its own completion: a group
// (steps, parallel, for_each) records none, so a trigger after it would never fire.
func (f *File) checkAfter(l *labels, w *spec.Workflow, t *Trigger, bad func(spec.Pos, string, string), ds *spec.Diagnostics) {
	var s *spec.Step
	for p, st := range l.steps {
		if t.After == st.ID || t.After == l.label(p) || t.After == p {
			s = st
			break
		}
	}
	switch {
	case s == nil:
		bad(t.Pos, t.Path+".after", t.After)
	case s.Kind == spec.KindSteps || s.Kind == spec.KindParallel || s.Kind == spec.KindForEach || s.Kind == spec.KindContinueAsNew:
		*ds = append(*ds, spec.Diagnostic{File: f.Path, Line: t.Pos.Line, Column: t.Pos.Col, Path: t.Path + ".after",
			Message:  fmt.Sprintf("step %q is a %s step, which records no completion of its own; name a step inside it, or use at:", t.After, s.Kind),
			Severity: spec.SeverityError})
	}
}
