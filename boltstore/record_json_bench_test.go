//go:build unix

package boltstore

import (
	"encoding/json"
	"testing"

	"github.com/wendflow/wend/history"
)

// The run and task records' encoders written by hand (record_json.go) against encoding/json,
// on what one activity step's commit encodes: its run's record and its next task. cpu-ns/op is
// the process's CPU time (GC included). The decision to keep them rests on their saving against
// a step's CPU (docs/design.md, "JSON written by hand"):
//
//	go test -run '^$' -bench 'RecordJSON$' -benchmem -count 5 ./boltstore/

// cpuPerOp runs f b.N times and reports the process's CPU time per call.
func cpuPerOp(b *testing.B, f func() error) {
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func BenchmarkRunRecordJSON(b *testing.B) {
	r := history.Run{WorkflowID: "order-1234", RunID: "0193f1c2-7d4e-7a00-9b1e-3c2d4e5f6a7b", Name: "order", Status: history.StatusRunning,
		StartedAt: t0, LastSeq: 42}
	id := []byte(r.RunID)
	b.Run("hand", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := framedRun(id, r); return err })
	})
	b.Run("encoding_json", func(b *testing.B) {
		cpuPerOp(b, func() error {
			body, err := encodeRun(r)
			_ = frame(id, body)
			return err
		})
	})
}

func BenchmarkTaskRecordJSON(b *testing.B) {
	task := history.Task{ID: "0193f1c2-7d4e-7a00-9b1e-3c2d4e5f6a7b/exec-s3#1", RunID: "0193f1c2-7d4e-7a00-9b1e-3c2d4e5f6a7b",
		Kind: history.TaskActivity, AvailableAt: t0, Dispatched: true,
		Data: json.RawMessage(`{"workflow_id":"order-1234","run_id":"0193f1c2-7d4e-7a00-9b1e-3c2d4e5f6a7b","step":"steps[3]","activity_execution_id":"exec-s3","attempt":1,"plugin":"p","activity":"echo","input":{"i":1}}`)}
	id := []byte(task.ID)
	b.Run("hand", func(b *testing.B) {
		cpuPerOp(b, func() error { _, err := framedTask(id, task); return err })
	})
	b.Run("encoding_json", func(b *testing.B) {
		cpuPerOp(b, func() error {
			body, err := json.Marshal(task)
			_ = frame(id, body)
			return err
		})
	})
}
