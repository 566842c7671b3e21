package sdk

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/sdk/go/wire"
)

// Error types the SDK itself produces (Error.Type).
const (
	TypeError           = wire.TypeError           // a plain Go error returned by a handler
	TypeBadInput        = wire.TypeBadInput        // input did not decode into the handler's type
	TypeUnknownActivity = wire.TypeUnknownActivity // the host asked for an activity not served
	TypePayloadTooLarge = wire.TypePayloadTooLarge // input or output over MaxPayloadBytes
	TypeCancelled       = wire.TypeCancelled       // the host cancelled the try
	TypeTimeout         = wire.TypeTimeout         // the try's deadline passed
	TypePanic           = wire.TypePanic           // the handler panicked
)

// MaxPayloadBytes bounds an activity's JSON input and output.
const MaxPayloadBytes = wire.MaxPayloadBytes

// Error is a typed activity failure. Return it from a handler to control the error type the
// workflow sees (retry.non_retryable lists match it) and whether a retry may help.
type Error struct {
	Type         string
	Message      string
	NonRetryable bool
	Details      any // JSON-encodable; nil for none
	// NextRetryDelay, over 0, is how long to wait before the next try instead of the step's
	// backoff (a server's Retry-After); the step's tries still bound the retries.
	NextRetryDelay time.Duration
}

func (e *Error) Error() string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

// NewError returns a retryable error of the given type.
func NewError(typ, message string) *Error {
	return &Error{Type: typ, Message: message}
}

// NonRetryable returns an error that fails the activity at once, whatever its retry policy.
func NonRetryable(typ, message string) *Error {
	return &Error{Type: typ, Message: message, NonRetryable: true}
}

// WithNextRetryDelay returns a copy of e asking wend to wait d before the next try.
func (e *Error) WithNextRetryDelay(d time.Duration) *Error {
	c := *e
	c.NextRetryDelay = d
	return &c
}

// WithDetails returns a copy of e carrying details.
func (e *Error) WithDetails(details any) *Error {
	c := *e
	c.Details = details
	return &c
}

func (e *Error) details() []byte {
	if e.Details == nil {
		return nil
	}
	if raw, ok := e.Details.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(e.Details)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"details_error": err.Error()})
	}
	return b
}
