package tracecontext

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// TraceParent is a W3C trace context: the trace, the parent span and the flags.
type TraceParent struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte // bit 0: sampled
}

// Errors of Parse.
var (
	// ErrMalformed is returned for a value that is not `VV-<32 hex>-<16 hex>-FF`.
	ErrMalformed = errors.New("want 00-<32 hex digits trace id>-<16 hex digits span id>-<2 hex digits flags>")
	// ErrZeroID is returned for an all-zero trace or span id, which the W3C format forbids.
	ErrZeroID = errors.New("trace id and span id must not be all zeros")
)

// Parse reads a traceparent header value (W3C Trace Context level 1). A version other than
// 00 is read as 00 when its first four fields have 00's shape, as the recommendation asks;
// version ff is invalid.
func Parse(s string) (TraceParent, error) {
	var tp TraceParent
	const size = 55 // 2 + 1 + 32 + 1 + 16 + 1 + 2
	if len(s) < size || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return tp, fmt.Errorf("traceparent %q: %w", clip(s), ErrMalformed)
	}
	version, ok := hexByte(s[0:2])
	if !ok || version == 0xff || (version == 0 && len(s) != size) || (len(s) > size && s[size] != '-') {
		return tp, fmt.Errorf("traceparent %q: %w", clip(s), ErrMalformed)
	}
	if !isLowerHex(s[3:35]) || !isLowerHex(s[36:52]) {
		return tp, fmt.Errorf("traceparent %q: %w", clip(s), ErrMalformed)
	}
	flags, ok := hexByte(s[53:55])
	if !ok {
		return tp, fmt.Errorf("traceparent %q: %w", clip(s), ErrMalformed)
	}
	_, _ = hex.Decode(tp.TraceID[:], []byte(s[3:35]))
	_, _ = hex.Decode(tp.SpanID[:], []byte(s[36:52]))
	tp.Flags = flags
	if tp.TraceID == ([16]byte{}) || tp.SpanID == ([8]byte{}) {
		return TraceParent{}, fmt.Errorf("traceparent %q: %w", clip(s), ErrZeroID)
	}
	return tp, nil
}

// String writes the value in version 00 (one allocation: the engine writes a try's on the
// commit path).
func (tp TraceParent) String() string {
	var b [55]byte
	b[0], b[1], b[2], b[35], b[52] = '0', '0', '-', '-', '-'
	hex.Encode(b[3:35], tp.TraceID[:])
	hex.Encode(b[36:52], tp.SpanID[:])
	hex.Encode(b[53:55], []byte{tp.Flags})
	return string(b[:])
}

// TraceIDString is the trace id in hex, as log lines and trace viewers show it.
func (tp TraceParent) TraceIDString() string { return hex.EncodeToString(tp.TraceID[:]) }

// ForRun is the trace context of a run: the accepted traceparent when the run was started
// with one (its span is the run span's remote parent), else a trace derived from the run id
// with no parent span. accepted was checked by Parse when the run started; a value that no
// longer parses is treated as absent.
func ForRun(runID, accepted string) (tp TraceParent, remoteParent bool) {
	if accepted != "" {
		if p, err := Parse(accepted); err == nil {
			return p, true
		}
	}
	var buf [64]byte
	sum := sha256.Sum256(append(append(buf[:0], "wend trace\x00"...), runID...))
	copy(tp.TraceID[:], sum[:16])
	tp.Flags = 1
	return tp, false
}

// RunSpanID is the span id of the run's span.
func RunSpanID(runID string) [8]byte { return spanID("run", runID, "", 0) }

// StepSpanID is the span id of an activity step occurrence, by its execution id (derived
// from the run and the step's path, the same for every try).
func StepSpanID(runID, execID string) [8]byte { return spanID("step", runID, execID, 0) }

// TrySpanID is the span id of one try of an activity step.
func TrySpanID(runID, execID string, attempt int) [8]byte {
	return spanID("try", runID, execID, attempt)
}

// ChildSpanID is the span id of a run_workflow step occurrence, by its step path: the parent
// of its child run's span.
func ChildSpanID(runID, step string) [8]byte { return spanID("child", runID, step, 0) }

// TimerSpanID is the span id of a delay step's timer, by its timer id.
func TimerSpanID(runID, timerID string) [8]byte { return spanID("timer", runID, timerID, 0) }

// SignalWaitSpanID is the span id of a wait_for_signal step occurrence, by its step path.
func SignalWaitSpanID(runID, step string) [8]byte { return spanID("signal", runID, step, 0) }

// ForChild is the traceparent a run_workflow step's child run starts with: the parent run's
// trace (from its accepted traceparent, or derived from its run id), the step's span. The
// child records it in its WorkflowStarted, so its spans nest under the step in every process.
func ForChild(parentRunID, parentAccepted, step string) string {
	tp, _ := ForRun(parentRunID, parentAccepted)
	tp.SpanID = ChildSpanID(parentRunID, step)
	return tp.String()
}

// ForTry is the traceparent a plugin gets for a try: the run's trace, the try's span.
func ForTry(runID, accepted, execID string, attempt int) string {
	tp, _ := ForRun(runID, accepted)
	return TryOf(tp, runID, execID, attempt)
}

// TryOf is ForTry for a caller that keeps the run's trace context (ForRun's result), so a
// try hashes only its own span id, not the run's trace id again.
func TryOf(run TraceParent, runID, execID string, attempt int) string {
	run.SpanID = TrySpanID(runID, execID, attempt)
	return run.String()
}

// spanID is the XXH64 of the span's kind, run, execution and attempt. The run's name is in
// it, so runs that share a trace (children, or runs started with one traceparent) have
// distinct ids; within a trace of n spans a 64-bit hash of good dispersion collides with a
// chance of about n²/2⁶⁵ (one in 10⁷ for a million spans). A run's trace id stays a SHA-256
// of its id: it is derived once a run.
func spanID(kind, runID, execID string, attempt int) [8]byte {
	var buf [128]byte // the hashed text is built here, not on the heap, unless it is longer
	b := append(append(append(buf[:0], "wend span\x00"...), kind...), 0)
	b = append(append(append(append(b, runID...), 0), execID...), 0)
	h := xxhash.Sum64(strconv.AppendInt(b, int64(attempt), 10))
	if h == 0 { // never in practice; the format forbids a zero id
		h = 1
	}
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], h)
	return id
}

func hexByte(s string) (byte, bool) {
	if !isLowerHex(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 8)
	return byte(v), err == nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// clip keeps an error message short when the value is long.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
