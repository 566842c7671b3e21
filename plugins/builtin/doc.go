// Package builtin holds the activity plugins the wend binary serves itself: `http`
// (web.request) and `exec` (sh.run). A workflow declares one with `plugins: {web: {builtin:
// http}}`; the host starts its own executable with BuiltinEnv set (Requested tells the binary
// so at start), and the process serves the builtin through plugins/sdk exactly like a plugin
// a user wrote, so tries, timeouts, cancellation, rolling and export treat it like any other.
//
// Invariants:
//   - Every activity declares its input and output JSON Schemas (`wend validate --plugins`).
//   - Bad input fails the try non-retryably (type BadInput) naming the field; a builtin never
//     panics on input.
//   - Outputs stay under the SDK's payload limit: bodies and command output are cut to a
//     stated size, and the output says so.
//   - exec runs its command in a process group of its own (a Job Object's reach on Windows is
//     the plugin's): a cancelled or timed-out try kills the command and its children.
package builtin
