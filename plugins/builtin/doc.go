// Package builtin holds the activity plugins the wend binary serves itself: `http`
// (web.request) and `exec` (sh.run). A workflow declares one with `plugins: {web: {builtin:
// http}}`; the host starts its own executable with BuiltinEnv set (Requested tells the binary
// so at start), and the process serves the builtin through sdk/go exactly like a plugin
// a user wrote, so tries, timeouts, cancellation, rolling and export treat it like any other.
//
// Invariants:
//   - Every activity declares its input and output JSON Schemas (`wend validate --plugins`).
//   - Bad input fails the try non-retryably (type BadInput) naming the field; a builtin never
//     panics on input.
//   - Outputs stay under the SDK's payload limit: bodies and command output are cut to a
//     stated size, and the output says so.
//   - No exec command outlives its try: it runs in a process group of its own, recorded
//     durably (plugins/cmdgroup) and killed when the try ends, before a retry, when the plugin
//     ends and at wend's next start; on Windows in a job object of its own.
package builtin
