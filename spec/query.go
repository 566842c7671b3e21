package spec

import (
	"errors"
	"fmt"
)

// ErrQuery is CompileQuery's refusal: the expression is over a limit or does not compile.
var ErrQuery = errors.New("invalid query")

// CompileQuery compiles a `wend query` expression: the names of a workflow's top-level
// expressions (input, state, steps, run), under the same limits (MaxExpressionBytes,
// MaxExpressionNodes), refused builtins and evaluation budget. Which steps.ID it may read is
// left to the caller, who knows which outputs the run has recorded.
func CompileQuery(src string) (*Expr, error) {
	e := &Expr{Source: src}
	if msg := compileExpr(e, &scope{}, false); msg != "" {
		return nil, fmt.Errorf("%w: %s", ErrQuery, msg)
	}
	return e, nil
}
