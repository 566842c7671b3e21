package spec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Bounds on validating one value against a schema from a workflow or a plugin. Data depth
// alone does not bound the work: anyOf tries every branch, so branches that recurse multiply
// it at each level, and jsonschema/v5 builds each failure's location from the whole path of
// schemas above it. A step is one schema applied to one part of the value; real inputs take
// a few thousand steps and a few milliseconds. Over either bound validation stops with
// ErrSchemaBudget: the steps make the refusal the same on every machine, the time caps what
// one step can cost on a schema built to make steps dear.
const (
	MaxSchemaSteps = 200_000
	MaxSchemaTime  = time.Second
)

// ErrSchemaBudget is returned by validation that took more than MaxSchemaSteps steps or
// MaxSchemaTime.
var ErrSchemaBudget = errors.New("schema validation took too long")

// budgetExtension names the keyword-less extension that counts steps; every object schema
// compiled by withStepBudget carries it.
const budgetExtension = "wend-step-budget"

// stepBudget counts the steps of one validation at a time: the extension instances of a
// compiled schema share it, and validateSafely holds mu while a validation runs, so the
// count and the context are that validation's.
type stepBudget struct {
	mu       sync.Mutex
	ctx      context.Context
	deadline time.Time
	steps    int
}

// start readies b for one validation; b.mu is held.
func (b *stepBudget) start(ctx context.Context) {
	b.ctx, b.steps, b.deadline = ctx, 0, time.Now().Add(MaxSchemaTime)
}

// budgetStop is the panic that ends a validation over its budget or whose context is done;
// validateSafely recovers it. jsonschema/v5 re-panics what it does not know, and a panic is
// the one way to stop its walk early: its extensions run after a schema's subschemas.
type budgetStop struct{ err error }

// step counts one step of the validation under way. A schema's Validate called directly
// (not through validateSafely) is not counted: no budget was started for it.
func (b *stepBudget) step() {
	if b.ctx == nil {
		return
	}
	b.steps++
	if b.steps > MaxSchemaSteps {
		panic(budgetStop{fmt.Errorf("stopped after %d steps, its limit: %w", MaxSchemaSteps, ErrSchemaBudget)})
	}
	if time.Now().After(b.deadline) {
		panic(budgetStop{fmt.Errorf("stopped after %v, its limit: %w", MaxSchemaTime, ErrSchemaBudget)})
	}
	if err := b.ctx.Err(); err != nil {
		panic(budgetStop{err})
	}
}

type budgetCompiler struct{ b *stepBudget }

func (c budgetCompiler) Compile(jsonschema.CompilerContext, map[string]any) (jsonschema.ExtSchema, error) {
	return budgetStep(c), nil
}

type budgetStep struct{ b *stepBudget }

func (s budgetStep) Validate(jsonschema.ValidationContext, any) error {
	s.b.step()
	return nil
}

// withStepBudget makes every object schema c compiles count its steps against one budget.
func withStepBudget(c *jsonschema.Compiler) *jsonschema.Compiler {
	c.RegisterExtension(budgetExtension, nil, budgetCompiler{&stepBudget{}})
	return c
}

// budgetOf returns the budget s was compiled with, or nil (a boolean schema, or one not
// compiled by withStepBudget).
func budgetOf(s *jsonschema.Schema) *stepBudget {
	if st, ok := s.Extensions[budgetExtension].(budgetStep); ok {
		return st.b
	}
	return nil
}
