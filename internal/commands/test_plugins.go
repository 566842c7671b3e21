package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/spec"
	"github.com/wendflow/wend/testsuite"
)

// mockChecker is `wend test --plugins`: it starts the plugins a test file's workflow declares
// (each once per run) and reports mocks of activities the plugin does not offer, and mocked
// outputs its declared output schema refuses, at the mock's position.
type mockChecker struct {
	ctx     context.Context
	e       *env
	descs   map[string]*plugins.Description // by workflow file and plugin name
	errs    map[string]error
	schemas map[string]*jsonschema.Schema // by workflow file, plugin and activity
}

func newMockChecker(ctx context.Context, e *env) *mockChecker {
	return &mockChecker{ctx: ctx, e: e, descs: map[string]*plugins.Description{}, errs: map[string]error{},
		schemas: map[string]*jsonschema.Schema{}}
}

func (mc *mockChecker) check(f *testsuite.File, w *spec.Workflow) spec.Diagnostics {
	var ds spec.Diagnostics
	add := func(pos spec.Pos, path, format string, args ...any) {
		ds = append(ds, spec.Diagnostic{File: f.Path, Line: pos.Line, Column: pos.Col, Path: path,
			Message: fmt.Sprintf(format, args...), Severity: spec.SeverityError})
	}
	mocks := slices.Clone(f.Mocks)
	for _, c := range f.Cases {
		mocks = append(mocks, c.Mocks...)
	}
	for _, m := range mocks {
		plugin, activity, _ := strings.Cut(m.Activity, ".")
		p, ok := w.Plugins[plugin]
		if !ok {
			add(m.Pos, m.Path+".activity", "%s declares no plugin %q", w.File, plugin)
			continue
		}
		d, err := mc.describe(w.File, p)
		if err != nil {
			add(m.Pos, m.Path+".activity", "plugin %s does not start: %v", plugin, err)
			continue
		}
		a, ok := d.Find(activity)
		if !ok {
			names := make([]string, len(d.Activities))
			for i, x := range d.Activities {
				names[i] = x.Name
			}
			slices.Sort(names)
			add(m.Pos, m.Path+".activity", "plugin %s has no activity %q; it offers: %s", plugin, activity, strings.Join(names, ", "))
			continue
		}
		if len(a.OutputSchema) == 0 {
			continue
		}
		key := w.File + "\x00" + m.Activity
		schema, ok := mc.schemas[key]
		if !ok {
			if schema, err = spec.CompileJSONSchema(a.OutputSchema); err != nil {
				add(m.Pos, m.Path+".activity", "plugin %s's output schema for %s does not compile: %v", plugin, activity, err)
				continue
			}
			mc.schemas[key] = schema
		}
		for _, r := range m.Results {
			if !r.HasOutput {
				continue // echo answers with the input; errors and timeouts have no output
			}
			if err := spec.ValidateInput(schema, r.Output); err != nil {
				msg := strings.Replace(err.Error(), "input", "output", 1)
				add(r.Pos, m.Path+".output", "does not match %s's output schema: %s", m.Activity, msg)
			}
		}
	}
	return ds
}

func (mc *mockChecker) describe(file string, p *spec.Plugin) (*plugins.Description, error) {
	key := file + "\x00" + p.Name
	if err, ok := mc.errs[key]; ok {
		return nil, err
	}
	if d, ok := mc.descs[key]; ok {
		return d, nil
	}
	d, err := plugins.DescribeCommand(mc.ctx, pluginConfig(file, p), pluginOptions(mc.e))
	if err != nil {
		mc.errs[key] = err
		return nil, err
	}
	mc.descs[key] = d
	return d, nil
}
