package spec

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// treeSchema is a recursive input schema: a tree of arrays, objects and integers.
const treeSchema = `input:
  $ref: "#/$defs/tree"
  $defs:
    tree:
      anyOf:
        - type: integer
        - type: array
          items: {$ref: "#/$defs/tree"}
        - type: object
          additionalProperties: {$ref: "#/$defs/tree"}
`

// forkSchema doubles the work at each level: both anyOf branches recurse into the same items,
// and jsonschema tries every branch, so a value n deep that fails at its leaf takes 2^n steps.
const forkSchema = `input:
  $ref: "#/$defs/fork"
  $defs:
    fork:
      anyOf:
        - type: integer
        - {type: array, items: {$ref: "#/$defs/fork"}}
        - {type: array, items: {$ref: "#/$defs/fork"}}
`

func compileTestInput(t testing.TB, src string) *jsonschema.Schema {
	t.Helper()
	s, ds := compileInputSchema("f", inputNode(t, src))
	if len(ds) != 0 || s == nil {
		t.Fatalf("compile: %s", diagLines(ds))
	}
	return s
}

func decodeJSON(t testing.TB, raw string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidateInputBounded(t *testing.T) {
	tree, fork := compileTestInput(t, treeSchema), compileTestInput(t, forkSchema)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	leafFails := strings.Repeat("[", 40) + `"x"` + strings.Repeat("]", 40)
	cases := []struct {
		name   string
		schema *jsonschema.Schema
		ctx    context.Context
		input  string
		want   error // nil: valid
	}{
		{"tree at the depth limit", tree, context.Background(), nestedJSON(MaxDataDepth), nil},
		{"tree 1,000 deep", tree, context.Background(), nestedJSON(1000), ErrDataTooDeep},
		{"tree 2,000 deep", tree, context.Background(), nestedJSON(2000), ErrDataTooDeep},
		{"tree 9,990 deep", tree, context.Background(), nestedJSON(9990), ErrDataTooDeep},
		{"fork valid", fork, context.Background(), nestedJSON(10), nil},
		{"fork failing 40 deep", fork, context.Background(), leafFails, ErrSchemaBudget},
		{"client gone", fork, cancelled, leafFails, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateInputContext(c.ctx, c.schema, decodeJSON(t, c.input))
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

// TestValidateInputBudgetPerCall checks the budget counts each validation afresh: a schema
// that ran out once still validates the next value.
func TestValidateInputBudgetPerCall(t *testing.T) {
	fork := compileTestInput(t, forkSchema)
	bad := decodeJSON(t, strings.Repeat("[", 40)+`"x"`+strings.Repeat("]", 40))
	if err := ValidateInput(fork, bad); !errors.Is(err, ErrSchemaBudget) {
		t.Fatalf("bad: %v", err)
	}
	// A small value: its cost stays far below the time budget on a loaded machine.
	if err := ValidateInput(fork, decodeJSON(t, nestedJSON(3))); err != nil {
		t.Fatalf("good after bad: %v", err)
	}
}

// BenchmarkValidateInputDeep measures the refusals of deep or costly input: each is refused
// in a bounded time whatever the value.
func BenchmarkValidateInputDeep(b *testing.B) {
	tree, fork := compileTestInput(b, treeSchema), compileTestInput(b, forkSchema)
	for _, n := range []int{1000, 2000, 9990} {
		v := decodeJSON(b, nestedJSON(n))
		b.Run("tree-"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if err := ValidateInput(tree, v); !errors.Is(err, ErrDataTooDeep) {
					b.Fatal(err)
				}
			}
		})
	}
	v := decodeJSON(b, nestedJSON(MaxDataDepth))
	b.Run("tree-at-limit", func(b *testing.B) {
		for b.Loop() {
			if err := ValidateInput(tree, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	bad := decodeJSON(b, strings.Repeat("[", 40)+`"x"`+strings.Repeat("]", 40))
	b.Run("fork-over-budget", func(b *testing.B) {
		for b.Loop() {
			if err := ValidateInput(fork, bad); !errors.Is(err, ErrSchemaBudget) {
				b.Fatal(err)
			}
		}
	})
}

// TestDirectValidateIsNotBudgeted: a schema from CompileJSONSchema validated with its own
// Validate (wend check --export does, on exports up to 256 MiB) counts no steps and never
// stops early; only validations through ValidateInput and CheckSignal are budgeted.
func TestDirectValidateIsNotBudgeted(t *testing.T) {
	s, err := CompileJSONSchema([]byte(`{"type": "array", "items": {"type": "integer"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if budgetOf(s) == nil {
		t.Fatal("no budget on a compiled schema")
	}
	if err := s.Validate(decodeJSON(t, "["+strings.Repeat("1,", MaxSchemaSteps)+"1]")); err != nil {
		t.Fatalf("direct validation: %v", err)
	}
}

// TestCheckSignalBounded: signal data goes through the same bounds as input: depth before
// the schema, then the step budget and the request's context.
func TestCheckSignalBounded(t *testing.T) {
	src := "wend: v1\nname: w\nsignals:\n  go:\n    schema:\n" +
		"      $ref: \"#/$defs/fork\"\n      $defs:\n        fork:\n          anyOf:\n" +
		"            - type: integer\n            - {type: array, items: {$ref: \"#/$defs/fork\"}}\n" +
		"            - {type: array, items: {$ref: \"#/$defs/fork\"}}\n" +
		"steps:\n  - wait_for_signal: go\n"
	w, ds := Load("w.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	costly := json.RawMessage(strings.Repeat("[", 40) + `"x"` + strings.Repeat("]", 40))
	for _, c := range []struct {
		name string
		ctx  context.Context
		data json.RawMessage
		want error
	}{
		{"valid", context.Background(), json.RawMessage(nestedJSON(8)), nil},
		{"too deep", context.Background(), json.RawMessage(nestedJSON(MaxDataDepth + 1)), ErrDataTooDeep},
		{"client gone", gone, costly, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := w.CheckSignalContext(c.ctx, "go", c.data)
			if c.want == nil && err != nil || c.want != nil && (!errors.Is(err, ErrSignalData) || !strings.Contains(err.Error(), c.want.Error())) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}
