package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// evalOnce compiles src in the test scope and evaluates it against env.
func evalOnce(t *testing.T, src string, env map[string]any) any {
	t.Helper()
	e := &Expr{Source: src}
	if msg := compileExpr(e, testScope(), false); msg != "" {
		t.Fatalf("compile %q: %s", src, msg)
	}
	got, err := e.Eval(env)
	if err != nil {
		t.Fatalf("eval %q: %v", src, err)
	}
	return got
}

// TestKeysSorted: keys(), values() and toPairs() walked Go's map order, so the
// same expression over the same map gave different lists (12 runs of a for_each over
// keys(input.m) ended on 5 different items). Each must give one answer, in key order, every
// time; 100 evaluations over 26 keys would show a random order with near certainty.
func TestKeysSorted(t *testing.T) {
	m := map[string]any{}
	var wantKeys, wantValues, wantPairs []any
	for c := 'a'; c <= 'z'; c++ {
		k := string(c)
		m[k] = int(c)
		wantKeys = append(wantKeys, k)
		wantValues = append(wantValues, int(c))
		wantPairs = append(wantPairs, []any{k, int(c)})
	}
	env := realisticEnv()
	env["input"] = map[string]any{"m": m}
	cases := []struct {
		src  string
		want any
	}{
		{"keys(input.m)", wantKeys},
		{"values(input.m)", wantValues},
		{"toPairs(input.m)", wantPairs},
		{"input.m | keys()", wantKeys},
		{"keys(input.m)[0]", "a"},
		{"last(values(input.m))", int('z')},
		{"fromPairs(toPairs(input.m)) | keys()", wantKeys},
		{"keys(groupBy(1..9, # % 3))", []any{0, 1, 2}},
		{"keys(fromPairs([[true, 1], ['b', 2], [2.5, 3], [nil, 4], [-1, 5], ['a', 6], [false, 7], [2, 8]]))",
			[]any{nil, false, true, -1, 2, 2.5, "a", "b"}},
		{"keys({})", []any{}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			for i := range 100 {
				got := evalOnce(t, tc.src, env)
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("evaluation %d: got %#v, want %#v", i, got, tc.want)
				}
			}
		})
	}
}

// TestKeysRefusesNonMaps keeps validate's check that keys() and friends take a map.
func TestKeysRefusesNonMaps(t *testing.T) {
	for _, src := range []string{"keys(1)", "values('x')", "toPairs([1])", "values(1..3)"} {
		if msg := compileExpr(&Expr{Source: src}, testScope(), false); msg == "" {
			t.Errorf("%s compiled; want it refused", src)
		}
	}
	for _, src := range []string{"keys(input.items)", "toPairs(input.order_id)"} {
		e := &Expr{Source: src}
		if msg := compileExpr(e, testScope(), false); msg != "" {
			t.Fatalf("%s: %s", src, msg)
		}
		if _, err := e.Eval(realisticEnv()); err == nil || !strings.Contains(err.Error(), "cannot") {
			t.Errorf("%s over a list: got %v, want an error", src, err)
		}
	}
}

// TestExpressionsDeterministic is the audit of docs/language.md ("Expressions are
// deterministic") as a test: every builtin that could depend on map order, the clock or the
// machine gives one answer over 100 evaluations, or is refused at compile time.
func TestExpressionsDeterministic(t *testing.T) {
	env := realisticEnv()
	m := map[string]any{}
	for i := range 30 {
		m[fmt.Sprintf("k%02d", i)] = map[string]any{"n": i % 4, "s": fmt.Sprint(i)}
	}
	env["input"] = map[string]any{"m": m, "items": env["input"].(map[string]any)["items"]}
	same := []string{
		"toJSON(input.m)",
		"string(input.m)",
		"'x${{ input.m }}'",
		"keys(groupBy(values(input.m), #.n))",
		"groupBy(values(input.m), #.n)[1]",
		"sortBy(values(input.m), #.n)",
		"uniq(map(values(input.m), #.n))",
		"map(toPairs(input.m), #[0] + '=' + #[1].s)",
		"filter(keys(input.m), # > 'k1')",
		"reduce(values(input.m), #acc + #.n, 0)",
		"find(values(input.m), #.n == 3)",
		"get(input.m, 'k07')",
		"sum(map(values(input.m), #.n))",
		"date('2024-01-02', '2006-01-02', 'UTC')",
		"duration('1h') * 2",
		"toJSON(fromJSON(toJSON(input.m)))",
	}
	for _, src := range same {
		t.Run(src, func(t *testing.T) {
			first := fmt.Sprintf("%#v", evalOnce(t, src, env))
			for i := range 100 {
				if got := fmt.Sprintf("%#v", evalOnce(t, src, env)); got != first {
					t.Fatalf("evaluation %d differs:\n%s\nfirst:\n%s", i, got, first)
				}
			}
		})
	}
	refused := map[string]string{
		"now()":                        "reads the clock",
		"now().Year()":                 "reads the clock",
		"date('2024-01-02')":           "explicit zone",
		"'2024-01-02' | date()":        "explicit zone",
		"timezone('Europe/Paris')":     "",
		"date('1:2', '15:04')":         "", // parsed in UTC: expr.Timezone("UTC") is set
		"date('x', 'y', input.zone)":   "",
		"repeat('a', 2)":               "allocate without bound",
		"map(keys(input.m), now())":    "reads the clock",
		"let f = now(); f.Unix()":      "reads the clock",
		"input.m | values() | first()": "",
	}
	for _, src := range []string{"date('2024-01-02', '2006-01-02', 'Local')", "timezone('Local')", "date('2024-01-02', '2006-01-02', input.zone)"} {
		e := &Expr{Source: src}
		if msg := compileExpr(e, testScope(), false); msg != "" {
			t.Fatalf("%s: %s", src, msg)
		}
		env["input"].(map[string]any)["zone"] = "Local"
		if _, err := e.Eval(env); err == nil || !strings.Contains(err.Error(), `"Local" is the zone of the machine`) {
			t.Errorf("%s: got %v, want the Local zone refused", src, err)
		}
	}
	for src, want := range refused {
		msg := compileExpr(&Expr{Source: src}, testScope(), false)
		if want == "" {
			continue // listed to show it is allowed; date's zone name is checked at run time
		}
		if !strings.Contains(msg, want) {
			t.Errorf("%s: got %q, want a refusal containing %q", src, msg, want)
		}
	}
}
