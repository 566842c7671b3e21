package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestBuiltinPlugins(t *testing.T) {
	tests := []struct {
		name    string
		plugins string
		command []string // of plugin p when valid
		errs    []string // each a diagnostic's "path: message"
	}{
		{name: "builtin", plugins: "{p: {builtin: exec}}", command: []string{BuiltinCommandPrefix + "exec"}},
		{name: "builtin with env", plugins: "{p: {builtin: exec, env: [HOME]}}", command: []string{BuiltinCommandPrefix + "exec"}},
		{name: "unknown builtin", plugins: "{p: {builtin: exek}}",
			errs: []string{`plugins.p.builtin: unknown builtin plugin "exek" (did you mean "exec"?); the builtins are ` + strings.Join(Builtins, ", ")}},
		{name: "builtin and command", plugins: "{p: {builtin: exec, command: ./x}}",
			errs: []string{"plugins.p: a builtin plugin takes no command or sha256: it is served by wend itself"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "wend: v1\nname: w\nplugins: " + tt.plugins + "\nsteps:\n  - activity: p.run\n"
			w, ds := (&Loader{SkipChildren: true}).Load("w.wend.yaml", []byte(src))
			var got []string
			for _, d := range ds {
				got = append(got, d.Path+": "+d.Message)
			}
			for _, want := range tt.errs {
				if !slices.Contains(got, want) {
					t.Errorf("diagnostics %q lack %q", got, want)
				}
			}
			if tt.errs != nil {
				return
			}
			if ds.HasErrors() {
				t.Fatalf("unexpected diagnostics %q", got)
			}
			if p := w.Plugins["p"]; !slices.Equal(p.Command, tt.command) {
				t.Errorf("command %q, want %q", p.Command, tt.command)
			}
		})
	}
}
