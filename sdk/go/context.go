package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Info identifies one try of one activity.
type Info struct {
	Activity   string
	WorkflowID string
	RunID      string
	StepPath   string
	// ActivityExecutionID is stable across tries and redeliveries: use it as the idempotency
	// key for remote effects. ActivityAttemptID is new for every try.
	ActivityExecutionID string
	ActivityAttemptID   string
	Attempt             int       // 1-based
	Deadline            time.Time // zero: none
	// LastProgress is the progress the previous try last reported (JSON), recorded in the
	// workflow's history; empty on a first try. Decode it to resume instead of starting over.
	LastProgress json.RawMessage
	// TraceParent is the try's W3C trace context, `00-<trace id>-<span id>-<flags>`: the run's
	// trace and the span wend records for this try. Start a span with it as the remote parent
	// (e.g. otel's propagation.TraceContext) so the plugin's own spans join the run's trace.
	// Empty when the run has no trace context (started without a traceparent, tracing off).
	TraceParent string
}

// Context is what a handler receives: a context.Context cancelled when the try must stop,
// plus the try's identity and a way to report progress.
type Context struct {
	context.Context
	Info
	heartbeat func(progress json.RawMessage) error
}

// Heartbeat reports that the try is alive, with optional progress (any JSON-encodable value,
// nil for none). It returns an error once the try has ended or the host is gone.
func (c *Context) Heartbeat(progress any) error {
	var raw json.RawMessage
	if progress != nil {
		b, err := json.Marshal(progress)
		if err != nil {
			return fmt.Errorf("heartbeat: encode progress: %w", err)
		}
		if len(b) > MaxPayloadBytes {
			return fmt.Errorf("heartbeat: progress is %d bytes, over the %d-byte limit", len(b), MaxPayloadBytes)
		}
		raw = b
	}
	if c.heartbeat == nil {
		return nil
	}
	return c.heartbeat(raw)
}

// NewContext makes a Context for calling a handler outside a plugin process, e.g. in a unit
// test. heartbeat may be nil.
func NewContext(ctx context.Context, info Info, heartbeat func(progress json.RawMessage) error) *Context {
	return &Context{Context: ctx, Info: info, heartbeat: heartbeat}
}
