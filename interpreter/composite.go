package interpreter

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/wendflow/wend/history"
)

func (n *node) startSteps() {
	q := &seq{r: n.r, steps: n.s.Steps, sc: n.sc, done: n.bodyDone}
	n.seqs = []*seq{q}
	q.start()
}

func (n *node) bodyDone(out any, f *history.Failure) {
	if f != nil {
		n.fail(f)
		return
	}
	n.complete(out)
}

// startParallel starts every branch; the step completes when all have, with their outputs
// in branch order. The first failure cancels the other branches.
func (n *node) startParallel() {
	n.outs = make([]any, len(n.s.Parallel))
	n.pending = len(n.s.Parallel)
	for i, b := range n.s.Parallel {
		if n.state != running {
			return // an earlier branch failed at once
		}
		k := n.r.newNode(b, n.sc, func(out any, f *history.Failure) {
			if n.state != running {
				return
			}
			if f != nil {
				n.fail(f)
				return
			}
			n.outs[i] = out
			n.pending--
			if n.pending == 0 {
				n.complete(n.outs)
			}
		})
		n.kids = append(n.kids, k)
		k.start()
	}
}

// startForEach runs the body once per item, at most `concurrency` at a time; outputs are
// collected in item order. The first failure cancels the items still running.
func (n *node) startForEach() {
	items, base, given := n.shardItems()
	if !given {
		v, err := n.s.ForEach.Eval(n.env(n.s.ForEach.StepRefs(), nil))
		if err != nil {
			n.stepFailed(exprFailure(n, "for_each", err))
			return
		}
		var ok bool
		if items, ok = asList(v); !ok {
			n.stepFailed(exprFailure(n, "for_each", fmt.Errorf("expected a list, got %s", describe(v))))
			return
		}
	}
	if msg := n.r.forEachRoom(n.s, len(items)); msg != "" {
		n.stepFailed(limitFailure(msg))
		return
	}
	if n.s.Shard > 0 {
		n.startShards(items)
		return
	}
	n.base = base
	n.items = items
	n.outs = make([]any, len(n.items))
	n.pending = len(n.items)
	if n.pending == 0 {
		n.complete(n.outs)
		return
	}
	n.fillItems()
}

func (n *node) fillItems() {
	for n.state == running && n.next < len(n.items) && n.active < n.s.Concurrency {
		i := n.next
		n.next++
		n.active++
		sc := n.sc.child(map[string]any{n.s.As: n.items[i], "index": n.base + i})
		sc.steps = &table[any]{}
		sc.loopStatic, sc.loopInstance = n.s.Path, n.path+"@"+strconv.Itoa(n.base+i)
		q := &seq{r: n.r, steps: n.s.Steps, sc: sc, done: func(out any, f *history.Failure) {
			if n.state != running {
				return
			}
			if f != nil {
				n.fail(f)
				return
			}
			n.outs[i] = out
			n.active--
			n.pending--
			if n.pending == 0 {
				n.complete(n.outs)
				return
			}
			n.fillItems()
		}}
		n.seqs = append(n.seqs, q)
		q.start()
	}
}

// asList reads v as a list. Expressions make lists of many Go types: []any from literals and
// JSON, []int from ranges (1..5), []string from split, []float64, and arrays; all are lists.
// nil is the empty list.
func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case nil:
		return nil, true
	case []any:
		return l, true
	}
	rv := reflect.ValueOf(v)
	if k := rv.Kind(); k != reflect.Slice && k != reflect.Array {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// describe names a value's kind in workflow terms, for messages.
func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a map (use keys(), values() or toPairs() to walk it)"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
