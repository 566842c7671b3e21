package interpreter

// Hooks for the external tests (package interpreter_test), which drive a Run through
// interpreter/sim and so cannot sit inside the package.

// SetEventCount makes r count n events in its history so far, as if it had recorded them.
func SetEventCount(r *Run, n int) { r.count = n }

// SetPayloadBytes makes r count n payload bytes in its history so far.
func SetPayloadBytes(r *Run, n int) { r.bytes = n }

// Jittered is the backoff spread of the current rules.
var Jittered = jittered
