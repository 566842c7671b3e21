package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/wendflow/wend/schemas"
)

func parseNode(t testing.TB, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return &n
}

// validWorkflow uses every construct of docs/language.md.
const validWorkflow = `# yaml-language-server: $schema=https://raw.githubusercontent.com/wendflow/wend/main/schemas/workflow.schema.json
wend: v1
name: provision-account
description: create an account
input:
  type: object
  required: [user_id]
  properties:
    user_id: {type: string, pattern: "^[a-z0-9]+$"}
    emails: {type: array, items: {type: string, format: email}}
plugins:
  accounts: ./plugins/accounts
  billing: {command: [python3, plugins/billing.py], sha256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", env: [HOME, MODE=test]}
  crm: {command: node}
defaults: {retry: {tries: 3, backoff: [1s, 5s, 30s]}, timeout: 1m, heartbeat_timeout: 10s}
timeouts: {execution: 24h, run: 2h}
compensate_on_failure: true
compensation: {continue_on_error: true}
on_cancel:
  - activity: accounts.notify_cancelled
steps:
  - id: create_user
    description: first
    activity: accounts.create_user
    with: {user_id: "${{ input.user_id }}"}
    set: {remote_user_id: "${{ output.id }}"}
    compensate_with:
      activity: accounts.delete_user
  - id: charge
    activity: billing.charge
    retry: {tries: 0, backoff: {initial: 1s, factor: 2, max: 1m, jitter: 0.2}, non_retryable: [CardDeclined]}
    timeout: 30s
    heartbeat_timeout: 1d12h
    catch:
      - fail: {message: "charge failed", type: Charge, non_retryable: true}
  - parallel:
      - activity: crm.add
      - steps: [{delay: 5s}, {delay: {until: "${{ input.at }}"}}]
  - for_each: "${{ input.emails }}"
    as: email
    concurrency: 4
    steps: [{activity: accounts.mail, with: {to: "${{ email }}"}}]
  - wait_for_signal: approved
    timeout: 72h
    if: true
  - run_workflow: ./report.wend.yaml
  - wait_for_workflow: "${{ input.depends_on }}"
  - fail: plain message
  - continue_as_new: true
output: {user: "${{ state.remote_user_id }}"}
`

func TestSchemaValidWorkflow(t *testing.T) {
	if ds := schemaDiagnostics("ok.wend.yaml", parseNode(t, validWorkflow)); len(ds) != 0 {
		t.Fatalf("unexpected diagnostics:\n%s", Diagnostics(ds).Error())
	}
}

// TestSchemaExamples: every example workflow satisfies the schema (the semantic checks are
// tested elsewhere).
func TestSchemaExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.wend.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found (%v): the examples folder moved?", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if ds := schemaDiagnostics(f, parseNode(t, string(src))); len(ds) != 0 {
			t.Errorf("%s:\n%s", f, Diagnostics(ds).Error())
		}
	}
}

// TestSchemaErrors pins message, path and position of representative schema errors. Each case
// is a step list item or a workflow fragment spliced into a minimal valid file.
func TestSchemaErrors(t *testing.T) {
	const head = "wend: v1\nname: w\nplugins: {a: ./a}\nsteps:\n" // steps start on line 5
	cases := []struct {
		name string
		src  string // whole file
		want string // Diagnostic.String() lines, sorted
	}{
		{"wrong type", head + "  - activity: a.b\n    retry: {tries: \"3\"}\n",
			`f:6:20: steps[0].retry.tries: expected integer, got string`},
		{"below minimum tries", head + "  - activity: a.b\n    retry: {tries: -1}\n",
			`f:6:20: steps[0].retry.tries: must be >= 0`},
		{"below minimum concurrency", head + "  - for_each: [1]\n    concurrency: 0\n    steps: [{activity: a.b}]\n",
			`f:6:18: steps[0].concurrency: must be >= 1`},
		{"bad duration", head + "  - activity: a.b\n    timeout: abc\n",
			`f:6:14: steps[0].timeout: expected a duration like 30s or 5m, got "abc"`},
		{"duration as number", head + "  - activity: a.b\n    timeout: 30\n",
			`f:6:14: steps[0].timeout: expected a duration like 30s or 5m, got 30`},
		{"bad identifier", head + "  - id: 1abc\n    activity: a.b\n",
			`f:5:9: steps[0].id: expected an identifier like create_user ([A-Za-z_][A-Za-z0-9_]*), got "1abc"`},
		{"bad plugin form", "wend: v1\nname: w\nplugins:\n  a: 5\nsteps: [{activity: a.b}]\n",
			`f:4:6: plugins.a: expected a plugin path, {command, sha256, env, start_timeout} or {builtin, env}, got 5`},
		{"bad plugin name", "wend: v1\nname: w\nplugins:\n  Bad: ./x\nsteps: [{activity: a.b}]\n",
			`f:4:3: plugins.Bad: expected a plugin name like billing ([a-z][a-z0-9_]*), got "Bad"`},
		{"plugin long form missing command", "wend: v1\nname: w\nplugins:\n  a: {sha256: abc}\nsteps: [{activity: a.b}]\n",
			"f:4:6: plugins.a: expected either command (with sha256 if pinned) or builtin, got a mapping\nf:4:15: plugins.a.sha256: expected 64 hex digits, got \"abc\""},
		{"bad backoff form", head + "  - activity: a.b\n    retry: {backoff: 5s}\n",
			`f:6:22: steps[0].retry.backoff: expected a list of durations or {initial, factor, max, jitter}, got "5s"`},
		{"bad backoff item", head + "  - activity: a.b\n    retry: {backoff: [1s, x]}\n",
			`f:6:27: steps[0].retry.backoff[1]: expected a duration like 30s or 5m, got "x"`},
		{"exponential factor and jitter", head + "  - activity: a.b\n    retry: {backoff: {initial: 1s, factor: 0.5, jitter: 1.5}}\n",
			"f:6:44: steps[0].retry.backoff.factor: must be >= 1\nf:6:57: steps[0].retry.backoff.jitter: must be <= 1"},
		{"delay wrong form", head + "  - delay: [1s]\n",
			`f:5:12: steps[0].delay: expected a duration like 10m or {until: expression}, got a list`},
		{"delay until wrong type", head + "  - delay: {until: 5}\n",
			`f:5:20: steps[0].delay.until: expected string, got integer`},
		{"catch wrong form", head + "  - activity: a.b\n    catch: oops\n",
			`f:6:12: steps[0].catch: expected a step or a list of steps, got "oops"`},
		{"nested step error through stepOrList", head + "  - activity: a.b\n    compensate_with: {activity: a.c, timeout: 1x}\n",
			`f:6:47: steps[0].compensate_with.timeout: expected a duration like 30s or 5m, got "1x"`},
		{"fail object without message", head + "  - fail: {type: X}\n",
			`f:5:11: steps[0].fail.message: missing required key`},
		{"bad activity", head + "  - activity: accounts\n",
			`f:5:15: steps[0].activity: expected plugin.activity like accounts.create_user, got "accounts"`},
		{"empty parallel", head + "  - parallel: []\n",
			`f:5:15: steps[0].parallel: must not be empty`},
		{"continue_as_new false", head + "  - continue_as_new: false\n",
			`f:5:22: steps[0].continue_as_new: must be true`},
		{"wrong version", "wend: v2\nname: w\nsteps: [{activity: a.b}]\n",
			`f:1:7: wend: must be "v1"`},
		{"missing required", "wend: v1\nname: w\n",
			`f:1:1: steps: missing required key`},
		{"empty steps", "wend: v1\nname: w\nsteps: []\n",
			`f:3:8: steps: must not be empty`},
		{"null value", head + "  - activity: a.b\n    timeout:\n",
			`f:6:13: steps[0].timeout: expected a duration like 30s or 5m, got null`},
		{"for_each wrong type", head + "  - for_each: 5\n    steps: [{activity: a.b}]\n",
			`f:5:15: steps[0].for_each: expected string or list, got integer`},
		// Reported by compileInputSchema against the full metaschema (TestInputSchemaCompileErrors),
		// by the decoder (a step's kind) and the checker (fields of another kind): not twice.
		{"input schema left to compileInputSchema", "wend: v1\nname: w\ninput: {type: objekt, $ref: \"x.json\"}\nsteps: [{activity: a.b}]\n", ``},
		{"no kind left to the decoder", head + "  - id: x\n", ``},
		{"two kinds left to the decoder", head + "  - activity: a.b\n    delay: 1s\n", ``},
		{"retry on a delay left to the checker", head + "  - delay: 1s\n    retry: {tries: 2}\n", ``},
		{"unknown keys dropped", head + "  - activity: a.b\n    retyr: {}\n", ``},
		{"root not a mapping", "- a\n", `f:1:1: expected mapping, got list`},
		{"quoted key", head + "  - activity: a.b\n    set: {x: 1}\n    with: {\"a.b\": 1}\n    retry: {\"tries\": x}\n",
			`f:8:22: steps[0].retry.tries: expected integer, got string`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lines []string
			for _, d := range schemaDiagnostics("f", parseNode(t, c.src)) {
				if d.Severity != SeverityError {
					t.Errorf("severity %q", d.Severity)
				}
				lines = append(lines, d.String())
			}
			if got := strings.Join(lines, "\n"); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// TestSchemaRejectsUnknownKeysForEditors: schemaDiagnostics drops additionalProperties errors
// (the decoder reports unknown keys with suggestions), but editors rely on the schema itself
// rejecting them.
func TestSchemaRejectsUnknownKeysForEditors(t *testing.T) {
	ws, err := workflowSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		`{"wend":"v1","name":"w","steps":[{"activity":"a.b"}],"stpes":1}`,
		`{"wend":"v1","name":"w","steps":[{"activity":"a.b","retyr":{}}]}`,
		`{"wend":"v1","name":"w","steps":[{"activity":"a.b","retry":{"tries":1,"backof":[]}}]}`,
		`{"wend":"v1","name":"w","plugins":{"a":{"command":"x","sha":"y"}},"steps":[{"activity":"a.b"}]}`,
		`{"wend":"v1","name":"w","defaults":{"retries":1},"steps":[{"activity":"a.b"}]}`,
		`{"wend":"v1","name":"w","steps":[{"delay":{"until":"x","at":1}}]}`,
	} {
		dec := json.NewDecoder(strings.NewReader(src))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		err := ws.schema.Validate(v)
		if err == nil || !strings.Contains(err.Error(), "additionalProperties") && !strings.Contains(err.Error(), "oneOf") {
			t.Errorf("%s: schema accepted an unknown key (err %v)", src, err)
		}
	}
}

// TestSchemaCompilesOffline: the workflow schema $refs the 2020-12 metaschema; jsonschema/v5
// must resolve it from its built-in copy, never through the (refusing) loader.
func TestSchemaCompilesOffline(t *testing.T) {
	before := schemaLoadAttempts.Load()
	c := newOfflineCompiler(nil)
	if err := c.AddResource(schemas.WorkflowID, bytes.NewReader(schemas.Workflow)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile(schemas.WorkflowID); err != nil {
		t.Fatal(err)
	}
	if n := schemaLoadAttempts.Load() - before; n != 0 {
		t.Fatalf("compiling the workflow schema tried to load %d URLs", n)
	}
}

func TestSchemaBadDocumentsDoNotPanic(t *testing.T) {
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	for _, src := range []string{"", "~", "5", "a: &x 1\nb: *x\n", "? [a]\n: 1\n", deep, "x: .inf\n", "x: !custom 1\n"} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			continue
		}
		ds := schemaDiagnostics("f", &n)
		if len(ds) == 0 {
			t.Errorf("%q: no diagnostics", src)
		}
	}
	if ds := schemaDiagnostics("f", nil); len(ds) == 0 {
		t.Error("nil node: no diagnostics")
	}
}

// FuzzSchemaDiagnostics: no YAML the parser accepts makes the schema check or the input schema
// compiler panic, and every finding has a position or says why not.
func FuzzSchemaDiagnostics(f *testing.F) {
	f.Add(validWorkflow)
	f.Add("wend: v1\nname: w\nsteps: [{delay: {until: 5}}]\n")
	f.Add("input: {$ref: \"http://127.0.0.1:1/x\"}\n")
	f.Add("input: {properties: {a: {pattern: \"(\"}}, $defs: {x: {$id: \"urn:x\"}}}\n")
	f.Add("a: &x [1]\nb: *x\n")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		var n yaml.Node
		if yaml.Unmarshal([]byte(src), &n) != nil {
			return
		}
		for _, d := range schemaDiagnostics("f", &n) {
			if d.Message == "" {
				t.Fatalf("empty message: %+v", d)
			}
		}
		if len(n.Content) > 0 && n.Content[0].Kind == yaml.MappingNode {
			root := n.Content[0]
			for i := 0; i+1 < len(root.Content); i += 2 {
				if root.Content[i].Value == "input" {
					s, _ := compileInputSchema("f", root.Content[i+1])
					if s != nil {
						_ = ValidateInput(s, map[string]any{"a": []any{int64(1), "x", nil}})
					}
				}
			}
		}
	})
}
