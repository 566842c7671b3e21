package spec

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/wendflow/wend/internal/inputfile"
)

// Loader reads workflow files and follows their run_workflow children, validating each file
// once however many parents use it.
type Loader struct {
	// ReadFile reads a workflow file; ReadWorkflowFile when nil.
	ReadFile func(name string) ([]byte, error)
	// SkipChildren leaves run_workflow targets unchecked: a run resumed from its recorded
	// spec text must not depend on files that may have changed since it started.
	SkipChildren bool

	results map[string]*result // by cleaned absolute path
	stack   []string           // files being loaded, to detect run_workflow cycles
}

type result struct {
	w     *Workflow
	diags Diagnostics
	err   error
}

// Load parses and checks a workflow from data; file names it in diagnostics and anchors
// run_workflow paths. The Workflow is nil only when the file could not be parsed at all.
func Load(file string, data []byte) (*Workflow, Diagnostics) {
	return new(Loader).load(file, data)
}

// Load parses and checks a workflow from data with this loader's settings.
func (l *Loader) Load(file string, data []byte) (*Workflow, Diagnostics) {
	return l.load(file, data)
}

// LoadFile reads and checks the workflow at path. The error is for I/O problems (the file
// cannot be read); problems in the file are diagnostics.
func (l *Loader) LoadFile(path string) (*Workflow, Diagnostics, error) {
	key := absPath(path)
	if r, ok := l.results[key]; ok {
		return r.w, r.diags, r.err
	}
	read := l.ReadFile
	if read == nil {
		read = ReadWorkflowFile
	}
	data, err := read(path)
	var big *inputfile.TooBigError
	if errors.As(err, &big) {
		ds := Diagnostics{{File: path, Message: tooBig(big.Size), Severity: SeverityError}}
		l.remember(key, &result{diags: ds})
		return nil, ds, nil
	}
	var special *inputfile.NotRegularError
	if errors.As(err, &special) {
		l.remember(key, &result{err: err}) // it names the path itself
		return nil, nil, err
	}
	if err != nil {
		err = fmt.Errorf("read %s: %w", path, unwrapPathError(err))
		l.remember(key, &result{err: err})
		return nil, nil, err
	}
	w, ds := l.load(path, data)
	l.remember(key, &result{w: w, diags: ds})
	return w, ds, nil
}

// ReadWorkflowFile reads a workflow file through the limit: a regular file (a link is followed
// to one) of at most MaxFileBytes. A FIFO or a device is refused by what it is, unread.
func ReadWorkflowFile(path string) ([]byte, error) { return inputfile.Read(path, MaxFileBytes) }

func (l *Loader) remember(key string, r *result) {
	if l.results == nil {
		l.results = map[string]*result{}
	}
	l.results[key] = r
}

func (l *Loader) load(file string, data []byte) (*Workflow, Diagnostics) {
	root, ds := parseYAML(file, data)
	if root == nil {
		return nil, ds
	}
	if sum := sha256.Sum256(data); !schemaPassed.has(sum) {
		sds := schemaDiagnostics(file, root)
		if len(sds) == 0 {
			schemaPassed.add(sum)
		}
		ds = append(ds, sds...)
	}
	d := &decoder{file: file}
	w := d.workflow(root)
	w.File, w.Source = file, data
	ds = append(ds, d.diags...)
	if d.input != nil {
		schema, sds := compileInputSchema(file, d.input)
		w.InputSchema = schema
		ds = append(ds, sds...)
	}
	for _, name := range w.SignalOrder {
		if n := d.signalSchemas[name]; n != nil {
			schema, sds := compileSchemaAt(file, "signals."+name+".schema", n)
			w.Signals[name].DataSchema = schema
			ds = append(ds, sds...)
		}
	}
	d.diags = nil
	d.checkScheduleInputs(w)
	ds = append(ds, d.diags...)
	l.stack = append(l.stack, absPath(file))
	defer func() { l.stack = l.stack[:len(l.stack)-1] }()
	c := &checker{file: file, w: w}
	if !l.SkipChildren {
		c.child = func(s *Step) string { return l.child(file, s) }
	}
	c.run()
	ds = append(ds, c.diags...)
	nameSteps(ds, file, w)
	return w, ds.Sorted()
}

// child validates the run_workflow target of s, relative to the parent file.
func (l *Loader) child(parent string, s *Step) string {
	if s.RunWorkflow == "" {
		return ""
	}
	path := ChildPath(parent, s.RunWorkflow)
	key := absPath(path)
	for i, p := range l.stack {
		if p == key {
			return "run_workflow forms a cycle: " + cycleText(l.stack[i:], key)
		}
	}
	if len(l.stack) >= MaxIncludeDepth {
		return fmt.Sprintf("run_workflow nests deeper than %d workflows", MaxIncludeDepth)
	}
	_, ds, err := l.LoadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("workflow file %s does not exist (paths are relative to %s)", s.RunWorkflow, filepath.Dir(parent))
	case err != nil:
		return err.Error()
	case ds.HasErrors():
		n := 0
		for _, d := range ds {
			if d.IsError() {
				n++
			}
		}
		errs := "1 error"
		if n != 1 {
			errs = fmt.Sprintf("%d errors", n)
		}
		return fmt.Sprintf("workflow %s is invalid (%s; first: %s)", s.RunWorkflow, errs, ds[0].String())
	}
	return ""
}

// ChildPath resolves a run_workflow path against the file that names it.
func ChildPath(parent, rel string) string {
	if filepath.IsAbs(rel) {
		return filepath.Clean(rel)
	}
	return filepath.Join(filepath.Dir(parent), rel)
}

func cycleText(stack []string, back string) string {
	names := make([]string, 0, len(stack)+1)
	for _, p := range append(stack, back) {
		names = append(names, oneLine(filepath.Base(p)))
	}
	return strings.Join(names, " -> ")
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
