package spec

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// exprAllocLimit bounds what compiling and evaluating one hostile expression may allocate in
// total (docs/reliability.md H7 asks for at most 64 MB of RSS growth; total allocation is
// stricter).
const exprAllocLimit = 64 << 20

// realisticEnv is what a step's expressions see in a run: an input of a few kilobytes, some
// state, two step outputs, a loop item.
func realisticEnv() map[string]any {
	items := make([]any, 100)
	for i := range items {
		items[i] = map[string]any{"sku": fmt.Sprintf("SKU-%04d", i), "qty": i % 7, "tags": []any{"a", "b"}}
	}
	return map[string]any{
		"input": map[string]any{
			"order_id": "order-42",
			"text":     strings.Repeat("lorem ipsum dolor sit amet ", 40),
			"quotes":   strings.Repeat(`"\`, 512),
			"items":    items,
			"nested":   map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{1, 2, 3}}}},
			"big_json": "[" + strings.Repeat("[1,2,3,4,5,6,7,8,9,10],", 999) + "[0]]",
		},
		"state": map[string]any{"approved": true, "count": 3},
		"steps": map[string]any{
			"reserve": map[string]any{"output": map[string]any{"lines": 3}},
			"charge":  map[string]any{"output": map[string]any{"id": "ch_1", "amount": 12.5}},
		},
		"run":   map[string]any{"workflow_id": "wf-1", "run_id": "run-1"},
		"item":  items[0],
		"index": 0,
	}
}

// testScope is the scope of a for_each body after steps reserve and charge have run.
func testScope() *scope {
	c := &checker{ids: map[string]*Step{"reserve": {ID: "reserve"}, "charge": {ID: "charge"}}}
	return (&scope{c: c}).with("item", "index").withSteps(map[string]bool{"reserve": true, "charge": true})
}

// amplifications are expressions built to allocate far more than their size.
func amplifications() []amplification {
	nest := func(fn, inner string, n int) string {
		return strings.Repeat(fn+"(", n) + inner + strings.Repeat(")", n)
	}
	return []amplification{
		{"nested replace", "replace(replace(replace(replace(input.text, 'o', input.text), 'o', input.text), 'o', input.text), 'o', input.text)"},
		{"nested repeat", "repeat(repeat(repeat('ab', 1000), 1000), 1000)"},
		{"repeat through pipe", "'ab' | repeat(1000000)"},
		{"map over a big range", "map(1..1000000, #)"},
		{"map of maps over ranges", "map(1..1000, map(1..1000, #))"},
		{"map over input cubed", "map(input.items, map(input.items, map(input.items, #)))"},
		{"flatten of nested ranges", "flatten(map(1..1000, map(1..1000, #)))"},
		{"filter over a big range", "filter(1..10000000, # % 2 == 0)"},
		{"sortBy over a big range", "sortBy(map(1..1000000, -#), #)"},
		{"toJSON of a big range of maps", "toJSON(map(1..100000, [#, #]))"},
		{"toJSON of nested toJSON", nest("toJSON", "input.quotes", 24)},
		{"toJSON of nested maps", "toJSON(map(1..300, map(1..300, [#])))"},
		{"fromJSON of a large string", "fromJSON(toJSON(map(1..200000, #)))"},
		{"fromJSON of input amplified", "map(1..1000, fromJSON(input.big_json))"},
		{"string concatenation loop", "reduce(1..100000, #acc + input.text, '')"},
		{"let chain string doubling", "let a = input.text + input.text; let b = a + a; let c = b + b; let d = c + c; let e = d + d; let f = e + e; let g = f + f; let h = g + g; let i = h + h; let j = i + i; let k = j + j; let l = k + k; let m = l + l; let n = m + m; let o = n + n; let p = o + o; let q = p + p; let r = q + q; let s = r + r; let u = s + s; len(u + u)"},
		{"join of a big range", "join(map(1..1000000, 'xxxxxxxxxx'), '')"},
		{"join of a long string repeated", "join(map(1..100000, input.text), '')"},
		{"string of a big range", "string(map(1..1000000, #))"},
		{"split of a concatenation", "split(reduce(1..50000, #acc + 'a,', ''), ',')"},
		{"sum of a huge range", "sum(map(1..100000000, #))"},
		{"groupBy over a big range", "groupBy(1..1000000, # % 1000)"},
		{"let chain doubling", "let a = input.items; let b = concat(a, a, a, a, a, a, a, a); let c = concat(b, b, b, b, b, b, b, b); let d = concat(c, c, c, c, c, c, c, c); concat(d, d, d, d, d, d, d, d)"},
	}
}

type amplification struct{ name, src string }

// TestExpressionAmplification compiles and runs expressions built to allocate far more than their
// size (docs/reliability.md H7): each must be refused at compile time or stopped by the memory
// budget, within exprAllocLimit and the CPU hang guard (BenchmarkExpressionAmplification
// measures the speed).
func TestExpressionAmplification(t *testing.T) {
	cases := amplifications()
	env := realisticEnv()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			e := &Expr{Source: tc.src}
			var msg string
			var out any
			var err error
			checkCPU(t, "compile and evaluate", func() {
				msg = compileExpr(e, testScope(), false)
				if msg == "" {
					out, err = e.Eval(env)
				}
			})
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			verdict := "compile: " + msg
			if msg == "" {
				verdict = fmt.Sprintf("eval: %v", err)
			}
			t.Logf("%.1f MiB allocated, %s", float64(alloc)/(1<<20), firstLine(verdict))
			if msg == "" && err == nil {
				t.Errorf("accepted: evaluated to a %T", out)
			}
			if msg == "" && err != nil && !isBudgetError(err) {
				t.Errorf("failed, but not for the memory budget: %v", err)
			}
			if alloc > exprAllocLimit {
				t.Errorf("allocated %.1f MiB, over %d MiB", float64(alloc)/(1<<20), exprAllocLimit>>20)
			}
		})
	}
}

func isBudgetError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "memory budget exceeded")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestValueEvalTemplates pins how templates evaluate: a string that is exactly one ${{ }} keeps the
// expression's type, other strings interpolate (nil as empty, non-strings as compact JSON),
// and maps and lists evaluate member by member.
func TestValueEvalTemplates(t *testing.T) {
	env := realisticEnv()
	cases := []struct {
		name, yaml string
		want       any
	}{
		{"literal string", `plain`, "plain"},
		{"literal number", `12`, 12},
		{"literal null", `~`, nil},
		{"exact template keeps int", `"${{ state.count }}"`, 3},
		{"exact template keeps float", `"${{ steps.charge.output.amount }}"`, 12.5},
		{"exact template keeps bool", `"${{ state.approved }}"`, true},
		{"exact template keeps list", `"${{ input.nested.a.b.c }}"`, []any{1, 2, 3}},
		{"exact template keeps map", `"${{ steps.reserve.output }}"`, map[string]any{"lines": 3}},
		{"exact template with spaces inside", `"${{   index   }}"`, 0},
		{"exact template of nil", `"${{ input.missing }}"`, nil},
		{"interpolation", `"order ${{ input.order_id }} by ${{ run.workflow_id }}"`, "order order-42 by wf-1"},
		{"interpolation of a number", `"${{ state.count }} items"`, "3 items"},
		{"interpolation of nil is empty", `"[${{ input.missing }}]"`, "[]"},
		{"interpolation of a list is JSON", `"c=${{ input.nested.a.b.c }}"`, "c=[1,2,3]"},
		{"interpolation of a map is JSON", `"r=${{ steps.reserve.output }}"`, `r={"lines":3}`},
		{"two templates side by side", `"${{ state.count }}${{ state.count }}"`, "33"},
		{"nested map", `{a: {b: "${{ state.count }}", c: "n${{ index }}"}, d: x}`,
			map[string]any{"a": map[string]any{"b": 3, "c": "n0"}, "d": "x"}},
		{"list of templates", `["${{ item.sku }}", "${{ item.qty + 1 }}", lit]`, []any{"SKU-0000", 1, "lit"}},
		{"list in map in list", `[{xs: ["${{ index }}"]}]`, []any{map[string]any{"xs": []any{0}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := loadValue(t, tc.yaml)
			got, err := v.Eval(env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// TestValueEvalErrors checks a failing expression fails the whole value, and a budget
// error can be told apart.
func TestValueEvalErrors(t *testing.T) {
	env := realisticEnv()
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"runtime error in a nested map", `{a: {b: "${{ input.items[1000] }}"}}`, "index out of range"},
		{"budget error in interpolation", `"x${{ len(map(1..1000000, #)) }}"`, "memory budget exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := loadValue(t, tc.yaml)
			_, err := v.Eval(env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// loadValue loads a workflow whose for_each body step has `with: <text>` after steps reserve
// and charge, and returns that with Value, compiled.
func loadValue(t *testing.T, text string) *Value {
	t.Helper()
	src := "wend: v1\nname: v\nplugins: {demo: ./demo}\nsteps:\n" +
		"  - {id: reserve, activity: demo.echo}\n  - {id: charge, activity: demo.echo}\n" +
		"  - for_each: \"${{ input.items }}\"\n    steps:\n      - activity: demo.echo\n        with: " + text + "\n"
	w, ds := Load("v.wend.yaml", []byte(src))
	if len(ds) > 0 {
		t.Fatalf("load: %s", ds.Error())
	}
	return w.Steps[2].Steps[0].With
}

// BenchmarkExpressionAmplification measures how fast each hostile expression is refused or stopped.
func BenchmarkExpressionAmplification(b *testing.B) {
	env := realisticEnv()
	for _, tc := range amplifications() {
		b.Run(strings.ReplaceAll(tc.name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e := &Expr{Source: tc.src}
				if compileExpr(e, testScope(), false) == "" {
					e.Eval(env)
				}
			}
		})
	}
}
