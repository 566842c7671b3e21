package history

import (
	"encoding/json"
	"fmt"
	"time"
)

// ActivityCall is one try of one activity step, as handed to an activity worker.
type ActivityCall struct {
	Plugin   string          // plugin name as declared in the workflow
	Activity string          // activity name inside the plugin
	Input    json.RawMessage // JSON input (the step's evaluated `with`)

	WorkflowID string
	RunID      string
	StepPath   string // e.g. "steps[2].parallel[0]"

	// ActivityExecutionID is stable across tries, redeliveries and crashes: the idempotency key
	// for remote effects. ActivityAttemptID is new for every try.
	ActivityExecutionID string
	ActivityAttemptID   string
	Attempt             int // 1-based

	Deadline time.Time // zero: none

	// LastProgress is the progress the previous try last reported by heartbeat, so a retry
	// can resume instead of starting over; empty on a first try.
	LastProgress json.RawMessage

	// Declared is the workflow's declaration of Plugin, resolved against the workflow file, so
	// a worker serving many workflows knows which program to run.
	Declared PluginRef

	// Secrets are the workflow's declared secrets: where the host finds each value.
	// SecretPlaces are the only places in Input where it puts one, in place of the reference
	// `${{ secrets.NAME }}` the workflow's template wrote there, just before the call: a
	// reference anywhere else in Input is data and reaches the plugin as that text. The
	// values themselves are never in a call, an event or a payload.
	Secrets      []SecretRef   `json:"secrets,omitempty"`
	SecretPlaces []SecretPlace `json:"secret_places,omitempty"`

	// TraceParent is the try's W3C trace context (the run's trace, the try's span), passed to
	// the plugin; empty when the run has no trace context.
	TraceParent string `json:"traceparent,omitempty"`
}

// SecretRef says where a secret's value is: the host's environment variable Env, or File.
type SecretRef struct {
	Name string `json:"name"`
	Env  string `json:"env,omitempty"`
	File string `json:"file,omitempty"` // absolute
}

// SecretPlace is where the host puts secret Name's value: at byte Offset of the string at
// Path in a call's Input (object keys and array indices from the top), where the reference
// `${{ secrets.NAME }}` stands.
type SecretPlace struct {
	Path   []string `json:"path"`
	Name   string   `json:"name"`
	Offset int      `json:"offset"`
}

// PluginRef is a plugin declaration with its paths resolved.
type PluginRef struct {
	Command []string `json:"command"`
	Dir     string   `json:"dir"` // the workflow file's folder: base of relative paths
	SHA256  string   `json:"sha256,omitempty"`
	Env     []string `json:"env,omitempty"`
	// StartTimeoutMS is the declaration's start_timeout in milliseconds; 0: the host's.
	StartTimeoutMS int64 `json:"start_timeout_ms,omitempty"`
}

// Failure categories (docs/design.md, Failures).
const (
	CategoryActivity        = "activity"
	CategoryTimeout         = "timeout"
	CategoryCancelled       = "cancelled"
	CategoryTerminated      = "terminated"
	CategoryChildWorkflow   = "child_workflow"
	CategoryExpression      = "expression"
	CategoryStructuralLimit = "structural_limit"
	CategoryInternal        = "internal"
	// CategoryPluginStart: a plugin could not be started (not found, a checksum mismatch, it
	// exited or timed out before its handshake, a bad handshake): the plugin's or the
	// machine's problem, which its stderr in the log explains, not a bug in wend.
	CategoryPluginStart = "plugin_start"
)

// ActivityError is how an activity try fails. Workers return it (as error) so the engine can
// tell whether a retry can help.
type ActivityError struct {
	Type         string          `json:"type"`
	Message      string          `json:"message"`
	NonRetryable bool            `json:"non_retryable"`
	Details      json.RawMessage `json:"details,omitempty"`
	Category     string          `json:"category"`
	// NextRetryDelayMS, over 0, is the wait the plugin asks for before the next try (an HTTP
	// Retry-After): it replaces the step's backoff for that retry.
	NextRetryDelayMS int64 `json:"next_retry_delay_ms,omitempty"`
}

func (e *ActivityError) Error() string {
	nr := ""
	if e.NonRetryable {
		nr = " (non-retryable)"
	}
	if e.Type == "" {
		return e.Message + nr
	}
	return fmt.Sprintf("%s: %s%s", e.Type, e.Message, nr)
}

// Heartbeat is a sign of life from a running try, with optional progress.
type Heartbeat struct {
	Progress json.RawMessage
}
