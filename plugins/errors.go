package plugins

import (
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/sdk/go/wire"
)

// Error types (history.ActivityError.Type) the host produces. Errors a plugin returns keep the
// plugin's type.
const (
	// TypeUnknownPlugin: the call names a plugin not in the host's configuration.
	TypeUnknownPlugin = "UnknownPlugin"
	// TypePluginNotFound: the plugin's program is missing or not executable.
	TypePluginNotFound = "PluginNotFound"
	// TypeStartFailed: the program could not be executed (wrong architecture, bad interpreter
	// line...).
	TypeStartFailed = "PluginStartFailed"
	// TypeChecksumMismatch: the program's sha256 differs from Config.SHA256.
	TypeChecksumMismatch = "PluginChecksumMismatch"
	// TypeStartTimeout: no handshake within Options.StartTimeout (retryable: load may be why).
	TypeStartTimeout = "PluginStartTimeout"
	// TypeExited: the plugin exited before its handshake (a crash at start, a wrong cookie).
	TypeExited = "PluginExited"
	// TypeBadHandshake: the plugin wrote something other than a valid go-plugin handshake for
	// this host (garbage on stdout, wrong protocol version, not gRPC, broken TLS or health).
	TypeBadHandshake = "PluginBadHandshake"
	// TypeCrashed: the plugin died or its connection broke during a call (retryable).
	TypeCrashed = "PluginCrashed"
	// TypeProtocol: the plugin broke the wend.plugin.v1 protocol (no result, invalid JSON...).
	TypeProtocol = "PluginProtocolError"
	// TypeHostClosed: the call came after Close.
	TypeHostClosed = "HostClosed"

	TypePayloadTooLarge = wire.TypePayloadTooLarge // input or output over MaxPayloadBytes
	TypeUnknownActivity = wire.TypeUnknownActivity // the plugin does not offer the activity
	TypeTimeout         = wire.TypeTimeout         // the try's deadline passed
	TypeCancelled       = wire.TypeCancelled       // the caller's context was cancelled
)

// MaxPayloadBytes bounds an activity's JSON input and output.
const MaxPayloadBytes = wire.MaxPayloadBytes

func newError(category, typ string, nonRetryable bool, format string, args ...any) *history.ActivityError {
	return &history.ActivityError{
		Type: typ, Message: fmt.Sprintf(format, args...), NonRetryable: nonRetryable, Category: category,
	}
}

// startError is a failure to get a plugin running: the plugin's or the machine's problem, not
// the activity's, nor a bug in wend.
func startError(typ string, nonRetryable bool, format string, args ...any) *history.ActivityError {
	return newError(history.CategoryPluginStart, typ, nonRetryable, format, args...)
}

// hostError is the host refusing a call it should not have got (after Close, for a plugin
// it was not given): wend's own problem.
func hostError(typ string, nonRetryable bool, format string, args ...any) *history.ActivityError {
	return newError(history.CategoryInternal, typ, nonRetryable, format, args...)
}

// callError is a failure of one try.
func callError(typ string, nonRetryable bool, format string, args ...any) *history.ActivityError {
	return newError(history.CategoryActivity, typ, nonRetryable, format, args...)
}
