//go:build unix

package testsuite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkThousandCases runs one test file of 1,000 cases against examples/order.wend.yaml
// (retries, a parallel step, for_each, a signal wait, the run timeout, the catch path, a cancel), decoding
// included: one iteration is what `wend test` does for 1,000 cases.
// go test ./testsuite -run XXX -bench ThousandCases -count 8
func BenchmarkThousandCases(b *testing.B) {
	dir := b.TempDir()
	wf, err := os.ReadFile("../examples/order.wend.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "order.wend.yaml"), wf, 0o644); err != nil {
		b.Fatal(err)
	}
	var t strings.Builder
	t.WriteString(`workflow: ./order.wend.yaml
mocks:
  - {activity: demo.echo, echo: true}
  - {activity: demo.greet, output: {greeting: hi}}
  - {activity: demo.record, output: {}}
cases:
`)
	for i := range 1000 {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&t, "  - name: shipped %d\n    input: {order_id: o-%d, customer: {email: a@b.c}, items: [{sku: A, qty: 1}, {sku: B, qty: 2}]}\n    signals: [{name: shipped, data: {tracking: T}, at: 71h}]\n    expect: {status: failed, closed_reason: timed_out}\n", i, i)
		case 1:
			fmt.Fprintf(&t, "  - name: flaky %d\n    input: {order_id: o-%d, customer: {email: a@b.c}, items: [{sku: A, qty: 1}]}\n    mocks: [{activity: demo.echo, step: charge, results: [{error: {message: x}}, {error: {message: x}}, {echo: true}]}]\n    signals: [{name: shipped, data: {tracking: T}, at: 1h}]\n    expect: {status: completed, output_contains: {tracking: T}, duration: 1h}\n", i, i)
		case 2:
			fmt.Fprintf(&t, "  - name: declined %d\n    input: {order_id: o-%d, customer: {email: a@b.c}, items: [{sku: A, qty: 1}]}\n    mocks: [{activity: demo.echo, step: charge, error: {type: CardDeclined, message: no}}]\n    expect: {status: failed, failure: {type: PaymentFailed}}\n", i, i)
		case 3:
			fmt.Fprintf(&t, "  - name: express %d\n    input: {order_id: o-%d, customer: {email: a@b.c}, items: [{sku: A, qty: 1}, {sku: B, qty: 1}, {sku: C, qty: 1}], express: true}\n    cancel: {at: 30m}\n    expect: {status: cancelled, duration: 30m}\n", i, i)
		}
	}
	path := filepath.Join(dir, "order.wend.test.yaml")
	if err := os.WriteFile(path, []byte(t.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		rep, err := Run([]string{path}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Passed != 1000 {
			var s strings.Builder
			rep.WriteText(&s, false)
			b.Fatalf("passed %d of 1000:\n%.3000s", rep.Passed, s.String())
		}
	}
	// CPU time (user + system, all threads) per iteration: on a shared machine the wall time
	// mostly measures the other jobs.
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
