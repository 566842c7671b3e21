package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/wendflow/wend/schemas"
)

// stepKindBases are a valid step of each kind, its kind key first.
var stepKindBases = []struct {
	kind string
	step map[string]any
}{
	{"activity", map[string]any{"activity": "p.a"}},
	{"steps", map[string]any{"steps": []any{map[string]any{"delay": "1s"}}}},
	{"parallel", map[string]any{"parallel": []any{map[string]any{"delay": "1s"}}}},
	{"for_each", map[string]any{"for_each": "${{ input.items }}", "steps": []any{map[string]any{"delay": "1s"}}}},
	{"delay", map[string]any{"delay": "1s"}},
	{"wait_for_signal", map[string]any{"wait_for_signal": "go"}},
	{"run_workflow", map[string]any{"run_workflow": "child.wend.yaml"}},
	{"wait_for_workflow", map[string]any{"wait_for_workflow": "other"}},
	{"continue_as_new", map[string]any{"continue_as_new": true}},
	{"fail", map[string]any{"fail": "boom"}},
}

// stepKeyValues are a valid value of every key a step may be given.
var stepKeyValues = map[string]any{
	"id": "x", "description": "d", "if": "${{ input.items != nil }}", "with": map[string]any{"a": 1},
	"set": map[string]any{"k": 1}, "timeout": "5s", "heartbeat_timeout": "5s", "retry": map[string]any{"tries": 2},
	"compensate_with": map[string]any{"delay": "1s"}, "catch": map[string]any{"delay": "1s"},
	"as": "line", "concurrency": 2, "shard": 10,
	"activity": "p.a", "steps": []any{map[string]any{"delay": "1s"}}, "parallel": []any{map[string]any{"delay": "1s"}},
	"for_each": "${{ input.items }}", "delay": "1s", "wait_for_signal": "go", "run_workflow": "child.wend.yaml",
	"wait_for_workflow": "other", "continue_as_new": true, "fail": "boom",
}

// topKeyValues are a valid value of every top-level key beside wend, name and steps.
var topKeyValues = map[string]any{
	"description": "d", "input": map[string]any{"type": "object"}, "output": "${{ state }}",
	"plugins": map[string]any{"q": "./q"}, "defaults": map[string]any{"timeout": "1m"},
	"timeouts": map[string]any{"run": "1h"}, "compensate_on_failure": true,
	"on_cancel": []any{map[string]any{"delay": "1s"}}, "signals": map[string]any{"go": map[string]any{}},
	"schedules": []any{map[string]any{"id": "nightly", "cron": "0 3 * * *"}},
	"limits":    map[string]any{"p.a": map[string]any{"rate": "5/s"}}, "concurrency": map[string]any{"key": "${{ input.id }}", "limit": 1},
	"secrets": map[string]any{"token": map[string]any{"env": "TOKEN"}}, "compensation": map[string]any{"continue_on_error": true},
	"retention": "30d", "search": map[string]any{"customer": map[string]any{"type": "string", "value": "${{ input.id }}"}},
}

// The editor's schema and `wend validate` accept and refuse the same files: every step kind
// with every key a step may have, and every top-level key. A key the validator refuses on a
// kind must be refused by the schema too, so an editor never shows a file as valid that
// `wend validate` then refuses, nor the other way round.
func TestSchemaAndValidatorAgree(t *testing.T) {
	schema := compileWorkflowSchema(t)
	// Every key the decoder takes on a step is in the table, and nothing else.
	if len(stepKeyValues) != len(stepKeys) {
		t.Fatalf("stepKeyValues has %d keys, the decoder takes %d (%v)", len(stepKeyValues), len(stepKeys), stepKeys)
	}
	for _, k := range stepKeys {
		if _, ok := stepKeyValues[k]; !ok {
			t.Fatalf("step key %q has no value in stepKeyValues", k)
		}
	}
	var root struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(schemas.Workflow, &root); err != nil {
		t.Fatal(err)
	}
	for k := range root.Properties {
		if _, ok := topKeyValues[k]; !ok && k != "wend" && k != "name" && k != "steps" {
			t.Fatalf("top-level key %q has no value in topKeyValues", k)
		}
	}
	for k := range topKeyValues {
		if _, ok := root.Properties[k]; !ok {
			t.Fatalf("topKeyValues has %q, which the schema does not declare", k)
		}
	}
	check := func(name string, doc map[string]any) (valid bool) {
		t.Helper()
		src, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(src, &v); err != nil {
			t.Fatal(err)
		}
		schemaErr := schema.Validate(v)
		ds := loadWithChild(t, src)
		if (schemaErr == nil) != !ds.HasErrors() {
			t.Errorf("%s: the schema says %s, wend validate says %s\n%s",
				name, verdict(schemaErr == nil, fmt.Sprint(schemaErr)), verdict(!ds.HasErrors(), fmt.Sprint(ds)), src)
		}
		return schemaErr == nil && !ds.HasErrors()
	}
	keys := make([]string, 0, len(stepKeyValues))
	for k := range stepKeyValues {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, b := range stepKindBases {
		if !check(b.kind, workflowWith(b.step, "", nil)) {
			t.Fatalf("the %s step every case builds on is not valid", b.kind)
		}
		for _, k := range keys {
			if _, ok := b.step[k]; ok {
				continue
			}
			check(b.kind+" + "+k, workflowWith(b.step, k, stepKeyValues[k]))
		}
	}
	for k, v := range topKeyValues {
		doc := workflowWith(map[string]any{"activity": "p.a"}, "", nil)
		if k == "plugins" {
			v = map[string]any{"p": "./p", "q": "./q"}
		}
		doc[k] = v
		if !check("top-level "+k, doc) {
			t.Errorf("top-level %s: the value the test gives it is refused by both; give a valid one", k)
		}
	}
}

func verdict(ok bool, why string) string {
	if ok {
		return "valid"
	}
	return "invalid (" + why + ")"
}

// workflowWith is a workflow whose one step is base plus key: value (none when key is "").
func workflowWith(base map[string]any, key string, value any) map[string]any {
	step := map[string]any{}
	for k, v := range base {
		step[k] = v
	}
	if key != "" {
		step[key] = value
	}
	return map[string]any{"wend": "v1", "name": "w", "plugins": map[string]any{"p": "./p"},
		"input": map[string]any{"type": "object"}, "steps": []any{step}}
}

// loadWithChild loads src as wend validate does, with a valid child workflow beside it.
func loadWithChild(t *testing.T, src []byte) Diagnostics {
	t.Helper()
	l := &Loader{ReadFile: func(name string) ([]byte, error) {
		if filepath.Base(name) == "child.wend.yaml" {
			return []byte("wend: v1\nname: child\nsteps: [{delay: 1s}]\n"), nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("no such file")}
	}}
	_, ds := l.Load("/w/w.wend.yaml", src)
	return ds
}

func compileWorkflowSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(schemas.WorkflowID, bytes.NewReader(schemas.Workflow)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemas.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
