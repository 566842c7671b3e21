package spec

import (
	"reflect"
	"strings"
	"testing"
)

// TestMeteredOperationsKeepSemantics checks that the metered rewrites of +, toJSON, fromJSON
// and join compute what expr's own operations compute.
func TestMeteredOperationsKeepSemantics(t *testing.T) {
	env := map[string]any{"input": map[string]any{"n": 2, "f": 1.5, "s": "x"}, "state": map[string]any{},
		"steps": map[string]any{}, "run": map[string]any{"workflow_id": "w", "run_id": "r"}}
	tests := []struct {
		src  string
		want any
	}{
		{"1 + 2", 3},
		{"input.n + 1", 3},
		{"input.f + 1", 2.5},
		{"'a' + input.s", "ax"},
		{"'n=' + string(input.n)", "n=2"},
		{"toJSON({a: [1, 'b']})", "{\n  \"a\": [\n    1,\n    \"b\"\n  ]\n}"},
		{"fromJSON('[1, {\"k\": true}]')", []any{1.0, map[string]any{"k": true}}},
		{"join(['a', 'b', 'c'], '-')", "a-b-c"},
		{"join(['a', 'b'])", "ab"},
		{"reduce([1, 2, 3], #acc + #, 0)", 6},
		{"map(['a', 'b'], # + '!')", []any{"a!", "b!"}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e := &Expr{Source: tt.src}
			if msg := compileExpr(e, &scope{c: &checker{}}, false); msg != "" {
				t.Fatalf("compile: %s", msg)
			}
			got, err := e.Eval(env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
			if _, leaked := env[meterName]; leaked {
				t.Fatal("the meter stayed in the environment")
			}
		})
	}
}

func TestMeterNameIsReserved(t *testing.T) {
	for _, src := range []string{"__meter__", "__add(__meter__, 1, 2)", "len(__x)"} {
		e := &Expr{Source: src}
		if msg := compileExpr(e, &scope{c: &checker{}}, false); !strings.Contains(msg, "reserved") {
			t.Errorf("%s: compile message %q, want a reserved-name refusal", src, msg)
		}
	}
}
