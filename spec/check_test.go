package spec

import (
	"strings"
	"testing"
)

// TestValidScopes pins constructs that must NOT be reported: each is a correct use of a name
// or a step id where the language says it exists.
func TestValidScopes(t *testing.T) {
	tests := map[string]string{
		"steps ref in same parallel branch": `
  - parallel:
      - steps:
          - {id: a, activity: p.x}
          - {activity: p.x, with: "${{ steps.a.output }}"}
      - {id: b, activity: p.x}
  - activity: p.x
    with: ["${{ steps.a.output }}", "${{ steps.b.output }}"]`,
		"loop body reads earlier body step and item": `
  - for_each: "${{ input.list }}"
    as: row
    concurrency: 3
    steps:
      - {id: first, activity: p.x, with: "${{ row }}"}
      - {activity: p.x, with: {i: "${{ index }}", f: "${{ steps.first.output }}"}}`,
		"sharded body reads its own steps, item, index, input and state": `
  - for_each: "${{ input.list }}"
    shard: 12799
    concurrency: 10
    steps:
      - {id: first, activity: p.x, with: "${{ [item, index, input.k, state.k] }}"}
      - {activity: p.x, with: "${{ steps.first.output }}", catch: {activity: p.x, with: "${{ error }}"}}`,
		"sharded for_each reads an earlier step outside its body, and later steps read it": `
  - {id: a, activity: p.x}
  - id: loop
    for_each: "${{ steps.a.output }}"
    shard: 10
    steps: [{activity: p.x}]
  - {activity: p.x, with: "${{ steps.loop.output }}"}`,
		"nested loops see both items": `
  - for_each: "${{ input.a }}"
    as: outer
    steps:
      - for_each: "${{ outer.children }}"
        steps: [{activity: p.x, with: "${{ [outer, item, index] }}"}]`,
		"compensation reads its own step": `
  - id: made
    activity: p.x
    compensate_with: {activity: p.x, with: "${{ steps.made.output }}"}`,
		"catch sees error and earlier steps": `
  - {id: a, activity: p.x}
  - id: b
    activity: p.x
    catch: [{activity: p.x, with: "${{ error.message + string(steps.a.output) }}"}]`,
		"signal and output in set": `
  - wait_for_signal: go
    set: {by: "${{ signal.by }}", same: "${{ output }}"}`,
		"bare condition and for_each": `
  - {id: a, activity: p.x}
  - if: steps.a.output != nil && input.flag == true
    for_each: input.items
    steps: [{activity: p.x}]`,
		"steps kind forwards ids": `
  - steps:
      - {id: inner, activity: p.x}
  - {activity: p.x, with: "${{ steps.inner.output }}"}`,
		"run fields": `
  - {activity: p.x, with: "${{ run.workflow_id + '/' + run.run_id }}"}`,
		"date with zone": `
  - {activity: p.x, with: "${{ date(input.at, '2006-01-02', 'UTC') }}"}`,
		"literal for_each list": `
  - for_each: [a, b]
    steps: [{activity: p.x, with: "${{ item }}"}]`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			src := "wend: v1\nname: t\ninput: {type: object}\nplugins: {p: ./p}\nsteps:" + body + "\n"
			_, ds := Load("t.wend.yaml", []byte(src))
			if len(ds) > 0 {
				t.Errorf("unexpected findings:\n%s\nin:\n%s", ds.Error(), src)
			}
		})
	}
}

// TestModel checks that the decoded model holds what the file says.
func TestModel(t *testing.T) {
	src, err := examplesFile("order.wend.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, ds := Load("order.wend.yaml", src)
	if len(ds) > 0 {
		t.Fatal(ds.Error())
	}
	if w.Name != "order-fulfilment" || w.Defaults.Retry.Tries != 3 || len(w.Steps) != 6 {
		t.Fatalf("workflow = %q, default tries %d, %d steps", w.Name, w.Defaults.Retry.Tries, len(w.Steps))
	}
	charge := w.Steps[1]
	if charge.Kind != KindActivity || charge.Plugin != "demo" || charge.Activity != "echo" ||
		charge.Retry.Tries != 5 || charge.Retry.NonRetryable[0] != "CardDeclined" || len(charge.Catch) != 2 {
		t.Errorf("charge step decoded as %+v", charge)
	}
	pack := w.Steps[2]
	if pack.Kind != KindForEach || pack.As != "line" || pack.Concurrency != 4 || len(pack.Steps) != 1 {
		t.Errorf("pack step decoded as %+v", pack)
	}
	if w.Steps[4].Kind != KindWaitForSignal || w.Steps[4].Signal != "shipped" || w.Steps[4].Timeout.D.Hours() != 72 {
		t.Errorf("shipped step decoded as %+v", w.Steps[4])
	}
	if got := w.Steps[3].Parallel[1].Steps[1]; got.Kind != KindDelay || got.Delay.D.Seconds() != 2 {
		t.Errorf("delay in branch decoded as %+v", got)
	}
	if !strings.HasPrefix(w.Steps[3].Parallel[1].Path, "steps[3].parallel[1]") {
		t.Errorf("path = %q", w.Steps[3].Parallel[1].Path)
	}
}
