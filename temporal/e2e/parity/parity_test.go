package parity

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/wendflow/wend/history/export"
)

func doc(t *testing.T, js string) export.Document {
	t.Helper()
	var d export.Document
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

const base = `{"workflow":{"status":"completed","run_id":"R1","output":{"b":1,"a":{"slept_ms":203}}},
 "activities":[
  {"activity_execution_id":"R1:s[1]","step":"s[1]","plugin":"demo","activity":"echo","status":"completed","input":{"i":2},"attempts":[{"attempt":1,"activity_attempt_id":"x1","outcome":"completed"}]},
  {"activity_execution_id":"R1:s[0]","step":"s[0]","plugin":"demo","activity":"fail","status":"failed","input":{"i":1},"attempts":[{"attempt":1,"activity_attempt_id":"x2","outcome":"failed","error":{"type":"E","message":"m","failure_category":"activity_error"}}]}],
 "failures":[{"seq":9,"time":"2026-01-01T00:00:00Z","event_type":"ActivityFailed","failure_category":"activity_error","propagation_kind":"caught","type":"E","message":"m","step":"s[0]","activity_execution_id":"R1:s[0]","attempt":1}],
 "signals":[{"name":"go","signal_id":"s1","data":{"ok":true},"received_seq":4,"pending":false,"applied_to_step":"s[2]"}]}`

// TestParityIgnoresWhatEnginesMayDiffer: ids, sequence numbers, times, key order, the order
// of activities and elapsed milliseconds do not count.
func TestParityIgnoresWhatEnginesMayDiffer(t *testing.T) {
	other := `{"workflow":{"status":"completed","run_id":"R2","output":{"a":{"slept_ms":250},"b":1}},
 "activities":[
  {"activity_execution_id":"R2:s[0]","step":"s[0]","plugin":"demo","activity":"fail","status":"failed","input":{"i":1},"attempts":[{"attempt":1,"activity_attempt_id":"y2","outcome":"failed","error":{"type":"E","message":"m","failure_category":"activity_error"}}]},
  {"activity_execution_id":"R2:s[1]","step":"s[1]","plugin":"demo","activity":"echo","status":"completed","input":{"i":2},"attempts":[{"attempt":1,"activity_attempt_id":"y1","outcome":"completed"}]}],
 "failures":[{"seq":12,"time":"2026-02-01T00:00:00Z","event_type":"ActivityFailed","failure_category":"activity_error","propagation_kind":"caught","type":"E","message":"m","step":"s[0]","activity_execution_id":"R2:s[0]","attempt":1}],
 "signals":[{"name":"go","signal_id":"s1","data":{"ok":true},"received_seq":7,"pending":false,"applied_to_step":"s[2]"}]}`
	if d := Diff(Of(doc(t, base)), Of(doc(t, other))); len(d) != 0 {
		t.Fatalf("differences reported where none count: %v", d)
	}
}

// TestParityReportsWhatMustAgree: each field the issue lists is compared.
func TestParityReportsWhatMustAgree(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*export.Document)
		want string
	}{
		{"status", func(d *export.Document) { d.Workflow.Status = "failed" }, ".status"},
		{"closed reason", func(d *export.Document) { d.Workflow.ClosedReason = "timed_out" }, ".closed_reason"},
		{"output", func(d *export.Document) { d.Workflow.Output = json.RawMessage(`{"b":2}`) }, ".output"},
		{"an extra try", func(d *export.Document) {
			d.Activities[0].Attempts = append(d.Activities[0].Attempts, export.Attempt{Attempt: 2, Outcome: "completed"})
		}, ".activities[1].attempts[1]"},
		{"failure message", func(d *export.Document) { d.Failures[0].Message = "other" }, ".failures[0].message"},
		{"compensation", func(d *export.Document) {
			d.Compensations = append(d.Compensations, export.Compensation{Step: "s[1]", Reason: "failure", Status: "completed"})
		}, ".compensations[0]"},
		{"signal applied elsewhere", func(d *export.Document) { d.Signals[0].AppliedToStep = "s[3]" }, ".signals[0].applied_to_step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := doc(t, base)
			tc.edit(&got)
			d := Diff(Of(doc(t, base)), Of(got))
			if !slices.ContainsFunc(d, func(s string) bool { return len(s) >= len(tc.want) && s[:len(tc.want)] == tc.want }) {
				t.Fatalf("no difference at %s; got %v", tc.want, d)
			}
		})
	}
}

// TestParityTimeoutByCategory: a timed-out try reported by the plugin's deadline on one
// engine and by the engine's timer on the other agrees; a timeout against an error does not.
func TestParityTimeoutByCategory(t *testing.T) {
	mk := func(typ, msg, prop, cat string) export.Document {
		return export.Document{
			Workflow:   export.Workflow{Status: "failed"},
			Activities: []export.Activity{{Step: "s", Attempts: []export.Attempt{{Outcome: "timed_out", Error: &export.AttemptError{Type: typ, Message: msg, FailureCategory: cat}}}}},
			Failures:   []export.Failure{{EventType: "ActivityAttemptTimedOut", FailureCategory: cat, PropagationKind: prop, Type: typ, Message: msg}},
		}
	}
	plugin := mk("Timeout", "plugin demo: activity sleep: timed out after 285ms", "activity", "timeout")
	timer := mk("timeout", "attempt 1 exceeded its timeout", "timeout", "timeout")
	if d := Diff(Of(plugin), Of(timer)); len(d) != 0 {
		t.Fatalf("the two clocks of one timeout differ: %v", d)
	}
	if d := Diff(Of(timer), Of(mk("Boom", "boom", "activity", "activity_error"))); len(d) == 0 {
		t.Fatal("a timeout and an activity error compare equal")
	}
}
