package spec

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/conf"
)

// expr's keys(), values() and toPairs() walk a Go map, whose order is random: the same run
// evaluated twice, or replayed after a crash, got its items in another order. These
// replacements walk the map in key order (sortedKeys), so one input always gives one answer.
// The rest of expr's builtins are audited in docs/language.md ("Expressions are deterministic").
var sortedMapFunctions = []expr.Option{
	sortedMapFunction("keys", "get keys from", func(_, k reflect.Value) any { return k.Interface() }),
	sortedMapFunction("values", "get values from", func(m, k reflect.Value) any { return m.MapIndex(k).Interface() }),
	sortedMapFunction("toPairs", "transform to pairs", func(m, k reflect.Value) any {
		return []any{k.Interface(), m.MapIndex(k).Interface()}
	}),
}

// sortedMapFunction replaces builtin name with one that lists item(map, key) for each key in
// order. It keeps the builtin's compile-time check, so keys(1) is still refused by validate.
func sortedMapFunction(name, verb string, item func(m, k reflect.Value) any) expr.Option {
	return func(c *conf.Config) {
		c.Functions[name] = &builtin.Function{
			Name:     name,
			Validate: builtin.Builtins[builtin.Index[name]].Validate,
			Func: func(args ...any) (any, error) {
				m, keys, err := mapArg(name, verb, args)
				if err != nil {
					return nil, err
				}
				out := make([]any, len(keys))
				for i, k := range keys {
					out[i] = item(m, k)
				}
				return out, nil
			},
		}
	}
}

// mapArg checks the single map argument of fn and returns it with its keys in order.
func mapArg(fn, verb string, args []any) (reflect.Value, []reflect.Value, error) {
	if len(args) != 1 {
		return reflect.Value{}, nil, fmt.Errorf("%s: invalid number of arguments (expected 1, got %d)", fn, len(args))
	}
	v := reflect.ValueOf(args[0])
	if v.Kind() != reflect.Map {
		return reflect.Value{}, nil, fmt.Errorf("cannot %s %s", verb, v.Kind())
	}
	return v, sortedKeys(v), nil
}

// sortedKeys returns m's keys in a total order: by kind (nil, booleans, numbers, strings,
// anything else), then by value within a kind. Maps from workflow data have string keys;
// groupBy and fromPairs can make maps with keys of mixed kinds, which still sort one way.
func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return compareKeys(a, b) })
	return keys
}

func compareKeys(a, b reflect.Value) int {
	a, b = unwrap(a), unwrap(b)
	ra, rb := keyRank(a), keyRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case rankNil:
		return 0
	case rankBool:
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool()))
	case rankNumber:
		return compareNumbers(a, b)
	case rankString:
		return cmp.Compare(a.String(), b.String())
	}
	// Keys of any other comparable type: by type name, then by printed value. Two distinct
	// keys may print alike (pointers); such keys cannot come from JSON or expr literals.
	if c := cmp.Compare(a.Type().String(), b.Type().String()); c != 0 {
		return c
	}
	return cmp.Compare(fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface()))
}

const (
	rankNil = iota
	rankBool
	rankNumber
	rankString
	rankOther
)

func unwrap(v reflect.Value) reflect.Value {
	for v.IsValid() && v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

func keyRank(v reflect.Value) int {
	if !v.IsValid() {
		return rankNil
	}
	switch v.Kind() {
	case reflect.Bool:
		return rankBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return rankNumber
	case reflect.String:
		return rankString
	}
	return rankOther
}

// compareNumbers orders numbers by value; integers compare exactly, and a float equal to an
// integer sorts after it so that the order stays total.
func compareNumbers(a, b reflect.Value) int {
	fa, fb := isFloat(a), isFloat(b)
	if !fa && !fb {
		return compareInts(a, b)
	}
	x, y := toFloat(a), toFloat(b)
	if c := cmp.Compare(x, y); c != 0 {
		return c
	}
	return cmp.Compare(boolInt(fa), boolInt(fb))
}

func compareInts(a, b reflect.Value) int {
	sa, sb := a.CanInt(), b.CanInt()
	switch {
	case sa && sb:
		return cmp.Compare(a.Int(), b.Int())
	case !sa && !sb:
		return cmp.Compare(a.Uint(), b.Uint())
	case sa: // a signed, b unsigned
		if a.Int() < 0 {
			return -1
		}
		return cmp.Compare(uint64(a.Int()), b.Uint())
	default:
		if b.Int() < 0 {
			return 1
		}
		return cmp.Compare(a.Uint(), uint64(b.Int()))
	}
}

func isFloat(v reflect.Value) bool { return v.Kind() == reflect.Float32 || v.Kind() == reflect.Float64 }

func toFloat(v reflect.Value) float64 {
	switch {
	case isFloat(v):
		return v.Float()
	case v.CanInt():
		return float64(v.Int())
	}
	return float64(v.Uint())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// zonePatch routes the zone name given to date(text, layout, zone) and timezone(zone) through
// __zone, which refuses "Local": that is the zone of whichever machine evaluates, so a replay
// elsewhere would read another time.
type zonePatch struct{}

func (zonePatch) Visit(node *ast.Node) {
	n, ok := (*node).(*ast.BuiltinNode)
	if !ok {
		return
	}
	args := n.Arguments
	if len(args) > 0 { // expr.Timezone has put UTC first: date(UTC, text, layout, zone)
		if c, ok := args[0].(*ast.ConstantNode); ok {
			if _, ok := c.Value.(*time.Location); ok {
				args = args[1:]
			}
		}
	}
	i := -1
	switch {
	case n.Name == "date" && len(args) == 3:
		i = len(n.Arguments) - 1
	case n.Name == "timezone" && len(args) == 1:
		i = 0
	}
	if i < 0 {
		return
	}
	if c, ok := n.Arguments[i].(*ast.CallNode); ok {
		if id, ok := c.Callee.(*ast.IdentifierNode); ok && id.Value == "__zone" {
			return // already patched: the visitor may see a node twice
		}
	}
	n.Arguments[i] = &ast.CallNode{Callee: &ast.IdentifierNode{Value: "__zone"}, Arguments: []ast.Node{n.Arguments[i]}}
}

var zoneFunction = expr.Function("__zone", func(args ...any) (any, error) {
	name, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("a time zone must be a name such as \"UTC\" or \"Europe/Paris\", got %T", args[0])
	}
	if name == "Local" {
		return nil, fmt.Errorf(`time zone "Local" is the zone of the machine evaluating, which breaks replay; name the zone, e.g. "UTC"`)
	}
	return name, nil
}, new(func(string) string))
