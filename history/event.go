package history

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
)

// EventType names a fact in a run's history (docs/design.md, History and events).
type EventType string

// Event types. Decisions are written by the interpreter; the others come from outside the
// workflow (plugins, timers, operators) and are what replay feeds back in.
const (
	WorkflowStarted        EventType = "WorkflowStarted"
	WorkflowCompleted      EventType = "WorkflowCompleted"
	WorkflowFailed         EventType = "WorkflowFailed"
	WorkflowCancelled      EventType = "WorkflowCancelled"
	WorkflowTimedOut       EventType = "WorkflowTimedOut"
	WorkflowContinuedAsNew EventType = "WorkflowContinuedAsNew"
	WorkflowTerminated     EventType = "WorkflowTerminated"

	ActivityScheduled         EventType = "ActivityScheduled"
	ActivityStarted           EventType = "ActivityStarted"
	ActivityHeartbeatRecorded EventType = "ActivityHeartbeatRecorded"
	ActivityCompleted         EventType = "ActivityCompleted"
	ActivityAttemptFailed     EventType = "ActivityAttemptFailed" // one try failed; retry or ActivityFailed follows
	ActivityFailed            EventType = "ActivityFailed"
	ActivityRetryScheduled    EventType = "ActivityRetryScheduled"
	ActivityTimedOut          EventType = "ActivityTimedOut"
	ActivityCancelled         EventType = "ActivityCancelled"
	// ActivityAttemptInterrupted: the process making a try stopped (crashed or shut down)
	// before the try's outcome was recorded, so the try may or may not have run. An input: the
	// interpreter answers with an ActivityRetryScheduled marked redelivery.
	ActivityAttemptInterrupted EventType = "ActivityAttemptInterrupted"

	TimerScheduled EventType = "TimerScheduled"
	TimerFired     EventType = "TimerFired"
	TimerCancelled EventType = "TimerCancelled"

	SignalReceived EventType = "SignalReceived"
	SignalApplied  EventType = "SignalApplied"

	ChildWorkflowScheduled EventType = "ChildWorkflowScheduled"
	ChildWorkflowCompleted EventType = "ChildWorkflowCompleted"
	ChildWorkflowFailed    EventType = "ChildWorkflowFailed"

	WorkflowWaitScheduled EventType = "WorkflowWaitScheduled"
	WorkflowWaitCompleted EventType = "WorkflowWaitCompleted"
	WorkflowWaitFailed    EventType = "WorkflowWaitFailed"

	StepFailed EventType = "StepFailed" // a non-activity step failed (fail step, expression error)

	CompensationStarted   EventType = "CompensationStarted"
	CompensationCompleted EventType = "CompensationCompleted"
	CompensationFailed    EventType = "CompensationFailed"

	CancelRequested    EventType = "CancelRequested"
	TerminateRequested EventType = "TerminateRequested"
	RetryRequested     EventType = "RetryRequested" // wend retry: the failed activity's tries start over

	ChildWorkflowCancelRequested EventType = "ChildWorkflowCancelRequested" // cancel (or terminate) a child with its parent
	RepairRequested              EventType = "RepairRequested"
	// WorkflowMigrated: an operator moved the open run to another text of its workflow (wend
	// migrate) after checking that the new text takes the recorded decisions. The run goes on
	// under that text (Migration, CurrentSpec); replay feeds it as bookkeeping.
	WorkflowMigrated EventType = "WorkflowMigrated"

	// StructuralLimitReached is a limit the hosting engine measures itself (Temporal's own
	// history length and size); the run fails with category structural_limit.
	StructuralLimitReached EventType = "StructuralLimitReached"
)

// Decision reports whether the interpreter writes events of this type. The others are inputs:
// facts from outside the workflow that replay feeds back to the interpreter.
func (t EventType) Decision() bool {
	switch t {
	case ActivityScheduled, ActivityRetryScheduled, ActivityFailed, ActivityCancelled,
		TimerScheduled, TimerCancelled, SignalApplied, ChildWorkflowScheduled,
		WorkflowWaitScheduled, StepFailed, CompensationStarted, CompensationCompleted,
		CompensationFailed, WorkflowCompleted, WorkflowFailed, WorkflowContinuedAsNew,
		WorkflowCancelled, WorkflowTimedOut, WorkflowTerminated, ChildWorkflowCancelRequested:
		return true
	}
	return false
}

// Terminal reports whether an event closes its run: nothing may follow it.
func (t EventType) Terminal() bool {
	switch t {
	case WorkflowCompleted, WorkflowFailed, WorkflowCancelled, WorkflowTimedOut,
		WorkflowContinuedAsNew, WorkflowTerminated:
		return true
	}
	return false
}

// Event is one fact of a run. Seq is contiguous from 1 within the run.
type Event struct {
	Seq                 uint64          `json:"seq"`
	Type                EventType       `json:"type"`
	Time                time.Time       `json:"time"`
	Step                string          `json:"step,omitempty"` // step instance path
	ActivityExecutionID string          `json:"activity_execution_id,omitempty"`
	Attempt             int             `json:"attempt,omitempty"`
	Data                json.RawMessage `json:"data,omitempty"`
}

// Errors of event encoding.
var (
	// ErrChecksum is returned by DecodeEvent when the stored bytes do not match their checksum.
	ErrChecksum = errors.New("event checksum mismatch")
	// ErrShort is returned by DecodeEvent for a record too short to hold a checksum.
	ErrShort = errors.New("event record too short")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeEvent frames an event for storage: a CRC-32C of the JSON, then the JSON. bbolt checks
// only its meta pages, so a torn or rotten data page would otherwise read back silently.
func EncodeEvent(e Event) ([]byte, error) {
	out, err := e.AppendJSON(make([]byte, 4, 4+128+len(e.Data)))
	if err != nil {
		return nil, fmt.Errorf("encode event %d: %w", e.Seq, err)
	}
	binary.BigEndian.PutUint32(out, crc32.Checksum(out[4:], castagnoli))
	return out, nil
}

// DecodeEvent reverses EncodeEvent, verifying the checksum.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	if len(b) < 4 {
		return e, ErrShort
	}
	if crc32.Checksum(b[4:], castagnoli) != binary.BigEndian.Uint32(b) {
		return e, ErrChecksum
	}
	if err := decodeEventJSON(b[4:], &e); err != nil {
		return e, fmt.Errorf("decode event: %w", err)
	}
	return e, nil
}

// DataOf decodes an event's payload into v.
func DataOf[T any](e Event) (T, error) {
	var v T
	if len(e.Data) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(e.Data, &v); err != nil {
		return v, fmt.Errorf("%s event %d: %w", e.Type, e.Seq, err)
	}
	return v, nil
}

// MustData encodes a payload; payload types are ours, so a failure is a programming error.
func MustData(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("history: encode payload %T: %v", v, err))
	}
	return b
}
