package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchSpec is a realistic 20-step workflow, different per i.
func benchSpec(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wend: v1\nname: flow-%d\ninput: {type: object, required: [id]}\n", i)
	b.WriteString("plugins: {demo: ./plugins/demo}\ndefaults: {retry: {tries: 3, backoff: [1s, 5s]}, timeout: 30s}\nsteps:\n")
	b.WriteString("  - id: s0\n    activity: demo.echo\n    with: {id: \"${{ input.id }}\"}\n")
	for j := 1; j < 18; j++ {
		fmt.Fprintf(&b, "  - id: s%d\n    activity: demo.echo\n    with: {prev: \"${{ steps.s%d.output.id }}\", n: %d}\n    set: {last: \"${{ output.id }}\"}\n", j, j-1, i+j)
	}
	b.WriteString("  - id: fan\n    parallel:\n      - {activity: demo.echo, with: {a: 1}}\n      - {delay: 5s}\n")
	b.WriteString("  - id: each\n    for_each: \"${{ input.items ?? [] }}\"\n    steps:\n      - {activity: demo.echo, with: {item: \"${{ item }}\", i: \"${{ index }}\"}}\n")
	b.WriteString("output: \"${{ steps.s17.output }}\"\n")
	return b.String()
}

// BenchmarkValidate1000Files runs one `wend validate` process over a folder of 1,000
// generated specs, the pre-commit case (target: under 2 s wall on 2 cores).
//
//	go test ./internal/commands -run '^$' -bench Validate1000 -benchtime 5x
func BenchmarkValidate1000Files(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "wend")
	build := exec.Command("go", "build", "-o", bin, "github.com/wendflow/wend/cmd/wend")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	specs := filepath.Join(dir, "specs")
	for i := range 1000 {
		sub := filepath.Join(specs, fmt.Sprintf("team%02d", i%20))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("flow%04d.wend.yaml", i)), []byte(benchSpec(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command(bin, "validate", specs).CombinedOutput()
		if err != nil {
			b.Fatalf("wend validate: %v\n%s", err, out)
		}
		worst = max(worst, time.Since(start))
		if !strings.Contains(string(out), "1000 files checked, all valid") {
			b.Fatalf("unexpected output:\n%s", out)
		}
	}
	b.ReportMetric(worst.Seconds(), "worst-s")
}
