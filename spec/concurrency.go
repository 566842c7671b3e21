package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Concurrency is a workflow's `concurrency:` (docs/language.md): at most Limit runs of this
// workflow with the same key run at once across the engine; a start over it waits, queued,
// and the queued runs of a key start first come, first started as runs of that key close.
type Concurrency struct {
	Key   *Value // an expression over input and run; its value, as text, is the key
	Limit int    // runs of one key at once, at least 1
	Pos   Pos
}

// Bounds of a concurrency key: a key is kept with each queued and running run, and shown.
const (
	MaxConcurrencyKeyBytes = 256
	MaxConcurrencyLimit    = 1_000_000
)

// concurrency decodes `concurrency:`; the JSON Schema reports wrong shapes and a missing key
// or limit, and checkConcurrency the key's names.
func (d *decoder) concurrency(w *Workflow, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	c := &Concurrency{Pos: posOf(n), Limit: 1}
	d.fields(n, "concurrency", []string{"key", "limit"}, func(key string, _, v *yaml.Node) {
		switch key {
		case "key":
			if v.Kind == yaml.ScalarNode { // else the schema says what a key is
				c.Key = newValue(v, "concurrency.key", d.badValue)
			}
		case "limit":
			c.Limit = integer(v, 1) // out of range: the schema says it
		}
	})
	if c.Key == nil {
		return // the schema says key is required
	}
	w.Concurrency = c
}

// concurrency checks the key's expressions: they may read input and run only, since the key
// is known before the run's first step.
func (c *checker) concurrency() {
	cc := c.w.Concurrency
	if cc == nil {
		return
	}
	sc := &scope{c: c, keyOnly: true}
	for _, e := range cc.Key.exprs() {
		msg := compileExpr(e, sc, false)
		for _, name := range []string{"state", "steps"} {
			if strings.HasPrefix(msg, "unknown name "+name+";") {
				msg = fmt.Sprintf("a concurrency key may read input and run only (it is known before the first step), not %s", name)
			}
		}
		if msg != "" {
			c.errorf(e.Pos, cc.Key.Path, "%s", msg)
		}
	}
	c.refuseSecrets(cc.Key)
}

// KeyOf evaluates the key for a run of workflowID and runID with input. A value that is not a
// string, number or boolean, or longer than MaxConcurrencyKeyBytes, is an error naming the
// key's line in file.
func (cc *Concurrency) KeyOf(file, workflowID, runID string, input any) (string, error) {
	env := map[string]any{"input": input, "run": map[string]any{"workflow_id": workflowID, "run_id": runID}}
	v, err := cc.Key.Eval(env)
	if err != nil {
		return "", fmt.Errorf("%s:%d: concurrency.key: %w", file, cc.Key.Pos.Line, err)
	}
	var key string
	switch x := v.(type) {
	case string:
		key = x
	case bool:
		key = strconv.FormatBool(x)
	case int:
		key = strconv.Itoa(x)
	case int64:
		key = strconv.FormatInt(x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("%s:%d: concurrency.key: evaluates to %v; a key must be a string, number or boolean", file, cc.Key.Pos.Line, x)
		}
		key = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return "", fmt.Errorf("%s:%d: concurrency.key: evaluates to %s; a key must be a string, number or boolean (give every run one: end the expression with ?? \"none\")",
			file, cc.Key.Pos.Line, kindOf(v))
	}
	if len(key) > MaxConcurrencyKeyBytes {
		return "", fmt.Errorf("%s:%d: concurrency.key: evaluates to %d bytes, over the %d-byte limit of a key", file, cc.Key.Pos.Line, len(key), MaxConcurrencyKeyBytes)
	}
	return key, nil
}

// kindOf names the JSON kind of v for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}
