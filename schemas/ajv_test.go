package schemas

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/wendflow/wend/testkit/needs"
)

// stepCases are workflows the schema must accept or refuse, the same way in every validator:
// an editor shows what `wend validate` would say.
var stepCases = []struct {
	name  string
	doc   string
	valid bool
}{
	{"activity", `{"wend":"v1","name":"w","steps":[{"id":"a","activity":"p.a","retry":{"tries":2}}]}`, true},
	{"for_each with steps", `{"wend":"v1","name":"w","steps":[{"for_each":"${{ input.items }}","as":"line","concurrency":2,"steps":[{"activity":"p.a"}]}]}`, true},
	{"nested sequence", `{"wend":"v1","name":"w","steps":[{"steps":[{"delay":"1s"}]}]}`, true},
	{"input with a local ref", `{"wend":"v1","name":"w","input":{"$ref":"#/$defs/x","$defs":{"x":{"type":"object"}}},"steps":[{"delay":"1s"}]}`, true},
	{"signals with a schema", `{"wend":"v1","name":"w","signals":{"approve":{"schema":{"type":"object","properties":{"by":{"type":"string"}}},"description":"a person approves"},"stop":{}},"steps":[{"wait_for_signal":"approve"}]}`, true},
	{"signal with an unknown key", `{"wend":"v1","name":"w","signals":{"approve":{"shema":{"type":"object"}}},"steps":[{"wait_for_signal":"approve"}]}`, false},
	{"signal schema type misspelt", `{"wend":"v1","name":"w","signals":{"approve":{"schema":{"type":"objekt"}}},"steps":[{"wait_for_signal":"approve"}]}`, false},
	{"signals not a map", `{"wend":"v1","name":"w","signals":["approve"],"steps":[{"wait_for_signal":"approve"}]}`, false},
	{"no kind", `{"wend":"v1","name":"w","steps":[{"id":"a"}]}`, false},
	{"two kinds", `{"wend":"v1","name":"w","steps":[{"activity":"p.a","delay":"1s"}]}`, false},
	{"for_each without steps", `{"wend":"v1","name":"w","steps":[{"for_each":"${{ input.items }}"}]}`, false},
	{"concurrency without for_each", `{"wend":"v1","name":"w","steps":[{"steps":[{"delay":"1s"}],"concurrency":2}]}`, false},
	{"retry on a delay", `{"wend":"v1","name":"w","steps":[{"delay":"1s","retry":{"tries":2}}]}`, false},
	{"with on a delay", `{"wend":"v1","name":"w","steps":[{"delay":"1s","with":{"a":1}}]}`, false},
	{"timeout on a parallel", `{"wend":"v1","name":"w","steps":[{"parallel":[{"delay":"1s"}],"timeout":"5s"}]}`, false},
	{"timeout and with on run_workflow", `{"wend":"v1","name":"w","steps":[{"run_workflow":"c.wend.yaml","timeout":"5s","with":1}]}`, true},
	{"timeout on a wait_for_signal", `{"wend":"v1","name":"w","steps":[{"wait_for_signal":"go","timeout":"5s"}]}`, true},
	{"input type misspelt", `{"wend":"v1","name":"w","input":{"type":"objekt"},"steps":[{"delay":"1s"}]}`, false},
	{"input with a remote ref", `{"wend":"v1","name":"w","input":{"$ref":"https://example.com/s.json"},"steps":[{"delay":"1s"}]}`, false},
}

// TestSchemaEnforcesStepKinds: exactly one kind per step, for_each's body, fields that
// belong to one kind, and a sketch of `input` as a JSON Schema, checked by the schema itself.
func TestSchemaEnforcesStepKinds(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(WorkflowID, bytes.NewReader(Workflow)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range stepCases {
		var v any
		if err := json.Unmarshal([]byte(tc.doc), &v); err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); (err == nil) != tc.valid {
			t.Errorf("%s: valid = %v, want %v (%v)", tc.name, err == nil, tc.valid, err)
		}
	}
}

// TestSchemasLoadInAjvStrictMode: ajv (the validator behind most JavaScript tooling and
// SchemaStore's checks) in strict mode refused the workflow schema for its editor-only keyword
// defaultSnippets. Every schema must compile there with only the errorMessage vocabulary
// declared, and the workflow schema must give the verdicts it gives in Go.
func TestSchemasLoadInAjvStrictMode(t *testing.T) {
	node := needs.Tool(t, "node", "apt-get install nodejs npm, then (cd schemas/ajv && npm ci)")
	needs.File(t, filepath.Join("ajv", "node_modules", "ajv"), "(cd schemas/ajv && npm ci)")
	type instance struct {
		Schema string          `json:"schema"`
		Name   string          `json:"name"`
		Value  json.RawMessage `json:"value"`
	}
	var req struct {
		Schemas   []json.RawMessage `json:"schemas"`
		Instances []instance        `json:"instances"`
	}
	for _, s := range published {
		req.Schemas = append(req.Schemas, s.doc)
	}
	for _, tc := range stepCases {
		req.Instances = append(req.Instances, instance{WorkflowID, tc.name, json.RawMessage(tc.doc)})
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("ajv", "check.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check.mjs: %v\n%s", err, stderr.String())
	}
	var res struct {
		Compile map[string]string `json:"compile"`
		Results []struct {
			Name   string   `json:"name"`
			Valid  bool     `json:"valid"`
			Errors []string `json:"errors"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("check.mjs output %q: %v", out, err)
	}
	for _, s := range published {
		msg, ok := res.Compile[s.id]
		if !ok {
			t.Errorf("%s: not compiled", s.name)
		} else if msg != "" {
			t.Errorf("%s: ajv strict mode refuses it: %s", s.name, msg)
		}
	}
	if len(res.Results) != len(stepCases) {
		t.Fatalf("%d results for %d cases", len(res.Results), len(stepCases))
	}
	for i, tc := range stepCases {
		if r := res.Results[i]; r.Valid != tc.valid {
			t.Errorf("ajv: %s: valid = %v, want %v (%s)", tc.name, r.Valid, tc.valid, strings.Join(r.Errors, "; "))
		}
	}
}
