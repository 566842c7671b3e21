package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// wend plugin test fails, with a FAIL line naming what broke, on plugins that break the
// protocol in different ways, and passes one that leaves out only what is optional (Lane,
// heartbeats, schemas) with skip lines.
func TestPluginTestFailsOnBrokenPlugin(t *testing.T) {
	bin := buildTestPlugin(t, "dev")
	dir := t.TempDir()
	spec := `wend: v1
name: w
plugins:
  late: {command: [` + bin + `], env: [WEND_TESTPLUGIN_MODE=lateevent]}
  chatty: {command: [` + bin + `], env: [WEND_TESTPLUGIN_MODE=chattylane]}
  garbage: {command: [` + bin + `], env: [WEND_TESTPLUGIN_MODE=garbage]}
  exits: {command: [` + bin + `], env: [WEND_TESTPLUGIN_MODE=exit]}
  nolane: {command: [` + bin + `], env: [WEND_TESTPLUGIN_MODE=nolane]}
steps: [{activity: nolane.noop}]
`
	file := filepath.Join(dir, "w.wend.yaml")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		plugin string
		code   int
		want   []string // patterns stdout must match
	}{
		{"late", 1, []string{`(?m)^FAIL  execute +Execute: an event after the try's final one: a heartbeat`, `(?m)^FAIL  errors `, `(?m)^plugin late: 4 of \d+ checks failed$`}},
		{"chatty", 1, []string{`(?m)^FAIL  lane +the plugin answered a Lane stream closed at once with an event: wend falls back`, `(?m)^ok    execute `, `(?m)^plugin chatty: 1 of \d+ checks failed$`}},
		{"garbage", 1, []string{`(?m)^FAIL  handshake +PluginBadHandshake: .*got "hello from a chatty plugin"`, `(?m)^plugin garbage: 1 of 1 checks failed$`}},
		{"exits", 1, []string{`(?m)^FAIL  handshake +PluginExited: .*exit status 3.*config file missing`}},
		{"nolane", 0, []string{`(?m)^skip  lane +the plugin does not serve Lane`, `(?m)^skip  heartbeats +sleep sent no heartbeat`, `(?m)^ok    cancel +Execute: a cancel \(reason cancelled\) ended sleep with Cancelled`, `(?m)^ok    shutdown `, `(?m)^plugin nolane: \d+ checks, none failed$`}},
	} {
		t.Run(tc.plugin, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(&env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }},
				[]string{"plugin", "test", "--workflow", file, tc.plugin, "--activity", "noop", "--slow", "sleep", "--slow-input", `{"ms":10000}`})
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !regexp.MustCompile(w).MatchString(out.String()) {
					t.Errorf("stdout does not match %s", w)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			}
		})
	}
}

// WEND_PLUGIN_START_TIMEOUT changes how long a plugin gets to start; a bad value is named on
// stderr and the default kept (the guide says how to change the start timeout).
func TestPluginStartTimeoutEnv(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    time.Duration
		warning string
	}{
		{"", 0, ""},
		{"30s", 30 * time.Second, ""},
		{"1m30s", 90 * time.Second, ""},
		{"30", 0, `WEND_PLUGIN_START_TIMEOUT="30" is not a positive duration such as 2m; using the default 30s`},
		{"-1s", 0, `WEND_PLUGIN_START_TIMEOUT="-1s" is not a positive duration`},
	} {
		var errb bytes.Buffer
		e := &env{stderr: &errb, getenv: func(k string) string {
			if k == startTimeoutEnv {
				return tc.value
			}
			return ""
		}}
		if got := pluginStartTimeout(e); got != tc.want || !strings.Contains(errb.String(), tc.warning) || (tc.warning == "" && errb.Len() > 0) {
			t.Errorf("%q: %s, stderr %q; want %s, %q", tc.value, got, errb.String(), tc.want, tc.warning)
		}
	}

	// The host is given it: a plugin that never handshakes is stopped after it.
	bin := buildTestPlugin(t, "dev")
	file := filepath.Join(t.TempDir(), "w.wend.yaml")
	spec := "wend: v1\nname: w\nplugins:\n  slow: {command: [" + bin + "], env: [WEND_TESTPLUGIN_MODE=nohandshake]}\nsteps: [{activity: slow.noop}]\n"
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == startTimeoutEnv {
			return "700ms"
		}
		return ""
	}
	code := run(&env{stdout: &out, stderr: &errb, getenv: getenv}, []string{"plugin", "describe", "--workflow", file, "slow"})
	if code != exitFailed || !strings.Contains(errb.String(), "no handshake within 700ms") {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
}
