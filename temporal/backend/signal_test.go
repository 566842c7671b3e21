package backend

import (
	"context"
	"strings"
	"testing"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	enumspb "go.temporal.io/api/enums/v1"
)

// withSignal is opened's history with a SignalReceived carrying client id signalID.
func withSignal(t *testing.T, signalID string) []history.Event {
	evs := opened(t)
	return append(evs, history.Event{Seq: uint64(len(evs) + 1), Type: history.SignalReceived, Time: t1,
		Data: history.MustData(history.Signal{Name: "go", SignalID: signalID})})
}

// TestSignalResendIsDuplicate: on Temporal as locally, a resend with a signal id
// the run recorded answers Duplicate and sends nothing, open run or closed; a new id to an
// open run is sent and not Duplicate; a new id to a closed run is refused as closed.
func TestSignalResendIsDuplicate(t *testing.T) {
	for _, c := range []struct {
		name     string
		status   enumspb.WorkflowExecutionStatus
		id       string
		dup      bool
		sent     bool
		wantCode string
	}{
		{"open, known id", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "s-1", true, false, ""},
		{"open, new id", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "s-2", false, true, ""},
		{"open, no id", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "", false, true, ""},
		{"closed, known id", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "s-1", true, false, ""},
		{"closed, new id", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "s-2", false, false, api.CodeRunClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFake(info(c.status, nil))
			f.events = map[string][]history.Event{"run-1": withSignal(t, "s-1")}
			f.inputs = startedWith(orderSpec)
			sent, err := b.SendSignal(context.Background(), "order-1", api.SignalRequest{Name: "go", ID: c.id})
			if code(err) != c.wantCode || (c.wantCode == "" && err != nil) {
				t.Fatalf("err = %v, want code %q", err, c.wantCode)
			}
			if sent.Duplicate != c.dup {
				t.Fatalf("duplicate %v, want %v", sent.Duplicate, c.dup)
			}
			if c.dup && sent.Run.WorkflowID != "order-1" {
				t.Fatalf("duplicate answers run %+v, want order-1's record", sent.Run)
			}
			signalled := len(f.calls) == 1 && strings.HasPrefix(f.calls[0], "signal order-1 wend.signal")
			if signalled != c.sent || (!c.sent && len(f.calls) != 0) {
				t.Fatalf("calls %v, want sent=%v", f.calls, c.sent)
			}
		})
	}
}

// startedWith is the start input of run-1 with spec text src.
func startedWith(src string) map[string]wire.StartInput {
	return map[string]wire.StartInput{"run-1": {Started: history.Started{WorkflowID: "order-1", RunID: "run-1",
		SpecFile: "/w/order.wend.yaml", SpecSource: src}}}
}

const contractSpec = `wend: v1
name: order
signals:
  approve: {schema: {type: object, required: [by], properties: {by: {type: string}}}}
steps:
  - wait_for_signal: approve
`

// TestSignalContractOnTemporal: the backend reads the spec from the run's start input and
// refuses an undeclared signal (unknown_signal) or bad data (invalid_signal) with the local
// engine's words, sending nothing; good data is sent.
func TestSignalContractOnTemporal(t *testing.T) {
	for _, c := range []struct {
		name, signal, data string
		code, frag         string
	}{
		{"undeclared", "aprove", `{"by":"ann"}`, api.CodeUnknownSignal, `run run-1 of order-1: signal "aprove" is not declared by workflow order (did you mean "approve"?)`},
		{"bad data", "approve", `{"by":1}`, api.CodeBadSignal, `run run-1 of order-1: signal "approve": its data does not match the schema under signals.approve: data.by: `},
		{"good", "approve", `{"by":"ann"}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFake(info(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil))
			f.inputs = startedWith(contractSpec)
			_, err := b.SendSignal(context.Background(), "order-1", api.SignalRequest{Name: c.signal, Data: []byte(c.data)})
			if code(err) != c.code || (err != nil && !strings.Contains(err.Error(), c.frag)) {
				t.Fatalf("err = %v, want code %q with %q", err, c.code, c.frag)
			}
			if sent := len(f.calls) == 1; sent != (c.code == "") {
				t.Fatalf("calls %v", f.calls)
			}
		})
	}
}
