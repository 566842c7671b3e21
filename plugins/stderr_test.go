package plugins

import "testing"

// TestKeyLine: of a start failure's stderr, the error message reaches the failure, not the
// trace around it (which the log keeps): Python's last line, Node's Error line, Go's panic,
// Ruby's LoadError line; none when no line states an error (the caller then shows them all).
func TestKeyLine(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"python", []string{"Traceback (most recent call last):", `  File "plugin.py", line 3, in <module>`, "    import grpc", "ModuleNotFoundError: No module named 'grpc'"},
			"ModuleNotFoundError: No module named 'grpc'"},
		{"node", []string{"node:internal/modules/cjs/loader:1080", "  throw err;", "  ^", "", "Error: Cannot find module '@grpc/grpc-js'", "Require stack:", "- /p/plugin.js", "    at Module._resolveFilename (node:internal/modules/cjs/loader:1077:15) {", "  code: 'MODULE_NOT_FOUND',", "}", "", "Node.js v20.20.2"},
			"Error: Cannot find module '@grpc/grpc-js'"},
		{"go", []string{"panic: open config.json: no such file or directory", "", "goroutine 1 [running]:", "main.main()", "\t/p/main.go:12 +0x1d"},
			"panic: open config.json: no such file or directory"},
		{"ruby", []string{"plugin.rb:3:in `require': cannot load such file -- grpc (LoadError)", "\tfrom plugin.rb:3:in `<main>'"},
			"plugin.rb:3:in `require': cannot load such file -- grpc (LoadError)"},
		{"plain", []string{"starting", "config file missing", ""}, ""},
		{"none", nil, ""},
	}
	for _, c := range cases {
		if got := keyLine(c.lines); got != c.want {
			t.Errorf("%s: keyLine = %q, want %q", c.name, got, c.want)
		}
	}
}
