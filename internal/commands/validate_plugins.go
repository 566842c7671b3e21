package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wendflow/wend/plugins"
	"github.com/wendflow/wend/spec"
)

// checkPlugins is `validate --plugins`: it starts each plugin the workflow declares, and
// reports activity steps naming an activity the plugin does not offer and literal `with:`
// inputs its input schema refuses, at the step's position.
func checkPlugins(ctx context.Context, e *env, file string, w *spec.Workflow) spec.Diagnostics {
	var ds spec.Diagnostics
	add := func(pos spec.Pos, path, format string, args ...any) {
		ds = append(ds, spec.Diagnostic{File: file, Line: pos.Line, Column: pos.Col, Path: path,
			Message: fmt.Sprintf(format, args...), Severity: spec.SeverityError})
	}
	descs := map[string]*plugins.Description{}
	for _, name := range w.PluginOrder {
		p := w.Plugins[name]
		for _, v := range pluginConfig(file, p).UnsetEnv() {
			ds = append(ds, spec.Diagnostic{File: file, Line: p.Pos.Line, Column: p.Pos.Col, Path: "plugins." + name + ".env",
				Message: unsetEnvNote(v), Severity: spec.SeverityWarning})
		}
		d, err := plugins.DescribeCommand(ctx, pluginConfig(file, p), pluginOptions(e))
		if err != nil {
			add(p.Pos, "plugins."+name, "plugin does not start: %v", err)
			continue
		}
		descs[name] = d
	}
	w.Walk(func(s *spec.Step) {
		if s.Kind != spec.KindActivity {
			return
		}
		d, ok := descs[s.Plugin]
		if !ok {
			return // not declared (reported by validate) or did not start (reported above)
		}
		a, ok := d.Find(s.Activity)
		if !ok {
			names := make([]string, len(d.Activities))
			for i, x := range d.Activities {
				names[i] = x.Name
			}
			slices.Sort(names)
			msg := fmt.Sprintf("plugin %s has no activity %q; it offers: %s", s.Plugin, s.Activity, strings.Join(names, ", "))
			add(s.Pos, s.Path+".activity", "%s", msg)
			return
		}
		if len(a.InputSchema) == 0 || (s.With != nil && !s.With.IsLiteral()) {
			return // any input, or computed at run time
		}
		schema, err := spec.CompileJSONSchema(a.InputSchema)
		if err != nil {
			add(s.Pos, s.Path+".activity", "plugin %s's input schema for %s does not compile: %v", s.Plugin, s.Activity, err)
			return
		}
		var input any
		pos, path := s.Pos, s.Path
		if s.With != nil {
			input, _ = s.With.Eval(map[string]any{})
			pos, path = s.With.Pos, s.With.Path
		}
		if err := spec.ValidateInput(schema, input); err != nil {
			add(pos, path, "does not match %s.%s's input schema: %v", s.Plugin, s.Activity, err)
		}
	})
	return ds
}

// unsetEnvNote is what validate --plugins and plugin test say of a name a plugin's env: passes
// through that is not set where wend runs.
func unsetEnvNote(name string) string {
	return fmt.Sprintf("%s is not set here, so the plugin gets none (set it where wend runs, or give a value: %s=VALUE)", name, name)
}
