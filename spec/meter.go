package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	exprrt "github.com/expr-lang/expr/vm/runtime"
)

// MaxExpressionOutputBytes caps the bytes of text one evaluation may build. expr's own
// MemoryBudget counts values, not bytes: a chain of `let a = b + b` doubles a string in a few
// characters, nested toJSON doubles escapes, reduce with `#acc + text` grows quadratically.
// Every string `+`, toJSON, fromJSON and join is therefore rewritten to a metered version
// that charges what it allocates against this budget.
const MaxExpressionOutputBytes = 8 << 20

// meterName is the hidden variable holding an evaluation's meter. Names starting with "__"
// are refused in workflow files, so no expression can read or replace it.
const meterName = "__meter__"

// errBudget is returned when an evaluation runs out of its byte budget; the text keeps expr's
// wording for its own budget, so both read alike.
var errBudget = fmt.Errorf("memory budget exceeded: an expression may build at most %d MiB of text", MaxExpressionOutputBytes>>20)

type meter struct{ left int }

func (m *meter) charge(n int) error {
	if n > m.left {
		m.left = 0
		return errBudget
	}
	m.left -= n
	return nil
}

// metered are the builtins that build text, and their replacements.
var metered = map[string]string{"toJSON": "__toJSON", "fromJSON": "__fromJSON", "join": "__join"}

// meterPatch rewrites the tree so that every text-building operation charges the meter.
type meterPatch struct{}

func (meterPatch) Visit(node *ast.Node) {
	meterArg := &ast.IdentifierNode{Value: meterName}
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		if n.Operator == "+" {
			ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: "__add"}, Arguments: []ast.Node{meterArg, n.Left, n.Right}})
		}
	case *ast.BuiltinNode:
		if name, ok := metered[n.Name]; ok {
			ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: name}, Arguments: append([]ast.Node{meterArg}, n.Arguments...)})
		}
	}
}

// meterFunctions are the compile options that define the metered operations.
var meterFunctions = []expr.Option{
	expr.Function("__add", meteredAdd),
	expr.Function("__toJSON", meteredToJSON),
	expr.Function("__fromJSON", meteredFromJSON),
	expr.Function("__join", meteredJoin),
}

func meterOf(args []any) (*meter, error) {
	if len(args) == 0 {
		return nil, errors.New("internal: metered call without a meter")
	}
	m, ok := args[0].(*meter)
	if !ok {
		return nil, errors.New("internal: expression evaluated without a meter")
	}
	return m, nil
}

func meteredAdd(args ...any) (out any, err error) {
	m, err := meterOf(args)
	if err != nil || len(args) != 3 {
		return nil, err
	}
	a, b := args[1], args[2]
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			if err := m.charge(len(sa) + len(sb)); err != nil {
				return nil, err
			}
			return sa + sb, nil
		}
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return exprrt.Add(a, b), nil
}

func meteredToJSON(args ...any) (any, error) {
	m, err := meterOf(args)
	if err != nil || len(args) != 2 {
		return nil, fmt.Errorf("toJSON takes one argument")
	}
	if s, ok := args[1].(string); ok && 6*len(s)+2 > m.left {
		return nil, errBudget // an escaped string can grow sixfold: refuse before allocating it
	}
	b, err := json.MarshalIndent(args[1], "", "  ")
	if err != nil {
		return nil, err
	}
	if err := m.charge(len(b)); err != nil {
		return nil, err
	}
	return string(b), nil
}

// fromJSON's decoded values take several times the text's size; charging 8x keeps repeated
// parses of a large input inside the budget's order of magnitude.
const fromJSONFactor = 8

func meteredFromJSON(args ...any) (any, error) {
	m, err := meterOf(args)
	if err != nil || len(args) != 2 {
		return nil, fmt.Errorf("fromJSON takes one argument")
	}
	s, ok := args[1].(string)
	if !ok {
		return nil, fmt.Errorf("fromJSON wants a string, got %T", args[1])
	}
	if err := m.charge(len(s) * fromJSONFactor); err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	return v, nil
}

func meteredJoin(args ...any) (any, error) {
	m, err := meterOf(args)
	if err != nil || len(args) < 2 || len(args) > 3 {
		return nil, fmt.Errorf("join takes a list and an optional separator")
	}
	glue := ""
	if len(args) == 3 {
		g, ok := args[2].(string)
		if !ok {
			return nil, fmt.Errorf("join's separator must be a string, got %T", args[2])
		}
		glue = g
	}
	var parts []string
	switch l := args[1].(type) {
	case []string:
		parts = l
	case []any:
		parts = make([]string, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("join wants a list of strings, item %d is %T", i, x)
			}
			parts[i] = s
		}
	default:
		return nil, fmt.Errorf("join wants a list of strings, got %T", args[1])
	}
	total := len(glue) * max(len(parts)-1, 0)
	for _, p := range parts {
		total += len(p)
	}
	if err := m.charge(total); err != nil {
		return nil, err
	}
	return strings.Join(parts, glue), nil
}
