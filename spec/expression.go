package spec

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"
)

// MemoryBudget caps what one evaluation may allocate, in expr's units (about one per allocated
// value); expr's default is 1e6.
const MemoryBudget = 200_000

// Expr is one expression: the text inside `${{ }}`, or a bare condition.
type Expr struct {
	Source string
	Pos    Pos      // where the expression starts in the file (best effort inside block scalars)
	Steps  []string // step ids it reads through steps.ID
	// ReadsInput and ReadsState say whether it names input or state (a sharded for_each
	// passes its child runs only what their body reads).
	ReadsInput, ReadsState bool
	prog                   *vm.Program
}

// Eval runs the compiled expression against env (names as in the scope it was compiled for).
// It adds its byte meter to env for the call, so env must not be shared across goroutines.
func (e *Expr) Eval(env map[string]any) (any, error) {
	if e.prog == nil {
		return nil, fmt.Errorf("expression %q was not compiled", e.Source)
	}
	env[meterName] = &meter{left: MaxExpressionOutputBytes}
	defer delete(env, meterName)
	m := vm.VM{MemoryBudget: MemoryBudget}
	out, err := m.Run(e.prog, env)
	if err != nil {
		return nil, &EvalError{Source: e.Source, Pos: e.Pos, Err: err}
	}
	return out, nil
}

// EvalError is an expression that failed at run time: one line that names the expression and
// where it starts in the workflow file, with expr's own message (its multi-line rendering of
// the source and a caret, which the progress line and the history cannot show, is dropped).
type EvalError struct {
	Source string
	Pos    Pos
	Err    error
}

func (e *EvalError) Error() string {
	msg := e.Err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSpace(exprLocation.ReplaceAllString(msg, ""))
	if e.Pos.Line > 0 {
		return fmt.Sprintf("evaluate %q (line %d, column %d): %s", e.Source, e.Pos.Line, e.Pos.Col, msg)
	}
	return fmt.Sprintf("evaluate %q: %s", e.Source, msg)
}

func (e *EvalError) Unwrap() error { return e.Err }

// compileExpr compiles e for the names of sc; asBool asks for a boolean result where the
// type is known. The returned message is "" on success.
func compileExpr(e *Expr, sc *scope, asBool bool) string {
	if len(e.Source) > MaxExpressionBytes {
		return fmt.Sprintf("expression is %d bytes, over the %d-byte limit", len(e.Source), MaxExpressionBytes)
	}
	if strings.TrimSpace(e.Source) == "" {
		return "empty expression"
	}
	g := &guard{}
	env := sc.env()
	env[meterName] = types.Any
	opts := append([]expr.Option{
		expr.Env(env),
		expr.MaxNodes(MaxExpressionNodes),
		expr.Timezone("UTC"),
		expr.Patch(g), // before meterPatch: it must see the names the author wrote
		expr.Patch(meterPatch{}),
		expr.Patch(zonePatch{}),
		zoneFunction,
	}, meterFunctions...)
	opts = append(opts, sortedMapFunctions...)
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	prog, err := expr.Compile(e.Source, opts...)
	if g.problem != "" {
		return g.problem
	}
	e.Steps = g.steps
	e.ReadsInput, e.ReadsState = g.input, g.state
	if msg := sc.checkStepRefs(g.steps); msg != "" {
		return msg
	}
	if err != nil {
		return compileMessage(err, sc)
	}
	if decl := sc.signalDecl(); decl != nil {
		if msg := checkDataRefs(decl, g.data); msg != "" {
			return msg
		}
	}
	e.prog = prog
	return ""
}

// forbidden are builtins that break replay (clock) or allocate without bound (expr's
// MemoryBudget does not meter them: nested replace reached 951 MB from 84 characters).
var forbidden = map[string]string{
	"now":     "now() reads the clock, which breaks replay; pass the time in the input or use a delay step",
	"repeat":  "repeat() is not available: it can allocate without bound",
	"replace": "replace() is not available: it can allocate without bound",
}

// guard inspects the parsed expression before type checking: it refuses forbidden calls and
// collects the step ids read through steps.ID.
type guard struct {
	problem string
	steps   []string
	data    []dataRef // chains read from signal (or output), for checkDataRefs
	input   bool      // names input
	state   bool      // names state
}

func (g *guard) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.BuiltinNode:
		g.call(n.Name, len(n.Arguments))
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			g.call(id.Value, len(n.Arguments))
		}
	case *ast.IdentifierNode:
		g.input = g.input || n.Value == "input"
		g.state = g.state || n.Value == "state"
		if strings.HasPrefix(n.Value, "__") && g.problem == "" {
			g.problem = fmt.Sprintf("names starting with __ are reserved for wend (%s)", n.Value)
		}
	case *ast.MemberNode:
		if r, ok := dataRefOf(n); ok {
			g.data = append(g.data, r)
		}
		base, ok := n.Node.(*ast.IdentifierNode)
		if !ok || base.Value != "steps" {
			return
		}
		if prop, ok := n.Property.(*ast.StringNode); ok {
			g.steps = append(g.steps, prop.Value)
		}
	}
}

func (g *guard) call(name string, args int) {
	if g.problem != "" {
		return
	}
	if why, bad := forbidden[name]; bad {
		g.problem = why
	}
	if name == "date" && args < 3 {
		g.problem = `date() needs an explicit zone so replay agrees: date(text, layout, "UTC")`
	}
}

// exprLocation is the "(line:col)" expr appends; the diagnostic carries the position instead.
var exprLocation = regexp.MustCompile(`\s*\(\d+:\d+\)$`)

// contextual names exist only in some places; an unknown-name error for one says where.
var contextual = map[string]string{
	"item":   "item and index exist only inside a for_each body (for_each's `as` renames item)",
	"index":  "index exists only inside a for_each body",
	"output": "output exists only in a step's `set`",
	"signal": "signal exists only in the `set` of a wait_for_signal step",
	"error":  "error exists only inside `catch`",
	"null":   "expressions spell null `nil` (as in `x == nil`); JSON's null arrives as nil",
	"None":   "expressions spell null `nil` (as in `x == nil`)",
}

// compileMessage turns expr's multi-line error (message, source, caret) into one line and adds
// a suggestion for unknown names.
func compileMessage(err error, sc *scope) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSpace(exprLocation.ReplaceAllString(msg, ""))
	if strings.Contains(msg, "exceeds maximum allowed nodes") {
		return fmt.Sprintf("expression has more than %d nodes, over the limit; split it across steps or simplify it", MaxExpressionNodes)
	}
	if got, ok := strings.CutPrefix(msg, "expected bool, but got "); ok {
		return "a condition must be a boolean expression, but this one gives a " + got
	}
	var name string
	if _, e := fmt.Sscanf(msg, "unknown name %s", &name); e == nil {
		name = strings.TrimRight(name, " (")
		msg = "unknown name " + name
		if why, ok := contextual[name]; ok {
			return msg + ": " + why
		}
		if s := suggest(name, sc.names()); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msg += "; names here: " + nameList(sc.names())
	}
	return msg
}
