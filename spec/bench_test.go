package spec

import (
	"fmt"
	"strings"
	"testing"
)

// genWorkflow writes a realistic workflow of about n steps: activities with templates that
// read earlier steps, conditions, set, retries, a parallel block and a for_each every tenth
// step, and an output.
func genWorkflow(name string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "wend: v1\nname: %s\ninput:\n  type: object\n  required: [order_id, items]\n", name)
	b.WriteString("  properties:\n    order_id: {type: string}\n    items: {type: array}\n")
	b.WriteString("plugins:\n  demo: ./plugins/demo\n  billing: {command: [python3, plugin.py], env: [API_URL]}\n")
	b.WriteString("defaults:\n  retry: {tries: 3, backoff: {initial: 1s, factor: 2, max: 1m}}\n  timeout: 30s\nsteps:\n")
	prev := "" // the last step that surely ran
	for i := 0; i < n; {
		id := fmt.Sprintf("s%d", i)
		switch {
		case i%10 == 5 && i+3 <= n:
			fmt.Fprintf(&b, "  - id: %s\n    parallel:\n", id)
			for j := range 2 {
				fmt.Fprintf(&b, "      - id: %s_b%d\n        activity: demo.echo\n        with: {order: \"${{ input.order_id }}\", branch: %d}\n", id, j, j)
			}
			i += 3
		case i%10 == 9 && i+2 <= n:
			fmt.Fprintf(&b, "  - id: %s\n    for_each: \"${{ input.items }}\"\n    as: line\n    concurrency: 4\n    steps:\n", id)
			fmt.Fprintf(&b, "      - id: %s_body\n        activity: billing.charge\n        with: {sku: \"${{ line.sku }}\", pos: \"${{ index }}\", prev: \"${{ state.count ?? 0 }}\"}\n", id)
			i += 2
		default:
			fmt.Fprintf(&b, "  - id: %s\n    activity: demo.echo\n", id)
			if prev != "" {
				fmt.Fprintf(&b, "    with:\n      note: \"after ${{ steps.%s.output.id }} for ${{ input.order_id }}\"\n      n: \"${{ %d * 2 + len(input.items) }}\"\n", prev, i)
			}
			if i%3 == 1 { // conditional: later steps cannot read it
				fmt.Fprintf(&b, "    if: \"${{ steps.%s.output != nil && len(input.items) > 0 }}\"\n", prev)
				b.WriteString("    set: {count: \"${{ output.count ?? 0 }}\"}\n")
				i++
				continue
			}
			if i%4 == 0 {
				b.WriteString("    retry: {tries: 5, backoff: [1s, 5s, 30s], non_retryable: [Invalid]}\n")
			}
			b.WriteString("    set: {count: \"${{ output.count ?? 0 }}\"}\n")
			i++
		}
		prev = id
	}
	b.WriteString("output:\n  last: \"${{ steps." + prev + ".output }}\"\n  order: \"${{ input.order_id }}\"\n")
	return []byte(b.String())
}

// TestGenWorkflowValid keeps the benchmark honest: the generated spec must be valid.
func TestGenWorkflowValid(t *testing.T) {
	for _, n := range []int{1, 10, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w, ds := Load("gen.wend.yaml", genWorkflow("gen", n))
			if len(ds) > 0 {
				t.Fatalf("generated workflow has findings:\n%s", ds.Error())
			}
			count := 0
			w.Walk(func(*Step) { count++ })
			if count < n {
				t.Fatalf("generated %d steps, want at least %d", count, n)
			}
		})
	}
}

// BenchmarkLoad200Steps parses and checks a realistic 200-step workflow: schema, decoding,
// scopes and about 400 expression compilations.
func BenchmarkLoad200Steps(b *testing.B) {
	data := genWorkflow("bench", 200)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ds := Load("bench.wend.yaml", data); len(ds) > 0 {
			b.Fatal(ds.Error())
		}
	}
}
