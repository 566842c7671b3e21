//go:build unix

package history

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

// The encoders written by hand (event_json.go, payload_json.go) against encoding/json, on what
// one activity step encodes: its two events, the schedule and the result. cpu-ns/op is the
// process's CPU time (GC included), which a loaded machine moves less than the wall time. The
// decision to keep one rests on its saving against a step's CPU (docs/design.md, "JSON
// written by hand"):
//
//	go test -run '^$' -bench 'JSON$' -benchmem -count 5 ./history/

// cpuPerOp runs f b.N times and reports the process's CPU time per call.
func cpuPerOp(b *testing.B, f func() error) {
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU() - start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchEvent = Event{Seq: 42, Type: ActivityCompleted, Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
	Step: "steps[3]", Data: json.RawMessage(`{"output":{"ok":true,"id":"0123456789abcdef"},"plugin_sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}`)}

func BenchmarkEventJSON(b *testing.B) {
	b.Run("hand", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := benchEvent.AppendJSON(nil); return err })
	})
	b.Run("encoding_json", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := json.Marshal(benchEvent); return err })
	})
}

func BenchmarkActivityScheduleJSON(b *testing.B) {
	s := ActivitySchedule{Plugin: "p", Activity: "echo", Input: json.RawMessage(`{"i":1,"name":"order-1234"}`), Tries: 3, TimeoutMS: 30000}
	b.Run("hand", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := s.JSON(); return err })
	})
	b.Run("encoding_json", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := json.Marshal(s); return err })
	})
}

func BenchmarkActivityResultJSON(b *testing.B) {
	r := ActivityResult{Output: json.RawMessage(`{"ok":true,"id":"0123456789abcdef"}`), PluginSHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}
	b.Run("hand", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := r.JSON(); return err })
	})
	b.Run("encoding_json", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := json.Marshal(r); return err })
	})
}
