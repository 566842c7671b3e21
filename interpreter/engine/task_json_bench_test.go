//go:build unix

package engine

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// The activity task's encoder written by hand (task_json.go) against encoding/json
// (history.MustData), once per activity step. cpu-ns/op is the process's CPU time (GC
// included). The decision to keep it rests on its saving against a step's CPU, which
// BenchmarkSequentialStep reports as cpu-µs/step (docs/design.md, "JSON written by hand"):
//
//	go test -run '^$' -bench 'ActivityTaskData$|SequentialStep' -benchmem -count 5 ./interpreter/engine/
func BenchmarkActivityTaskData(b *testing.B) {
	at := activityTask{WorkflowID: "order-1234", RunID: "0193f1c2-7d4e-7a00-9b1e-3c2d4e5f6a7b", Step: "steps[3]",
		ExecID: "exec-s3", Attempt: 1, Plugin: "p", Activity: "echo", Input: json.RawMessage(`{"i":1}`), TimeoutMS: 30000}
	run := func(b *testing.B, f func()) {
		b.ReportAllocs()
		start := processCPU()
		for b.Loop() {
			f()
		}
		b.ReportMetric(float64((processCPU() - start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	b.Run("hand", func(b *testing.B) { run(b, func() { _ = at.data() }) })
	b.Run("encoding_json", func(b *testing.B) { run(b, func() { _ = history.MustData(at) }) })
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
