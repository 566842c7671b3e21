// Package interpreter is wend's deterministic core: it turns a workflow spec and the facts of
// a run's history into the run's next decisions.
//
// A Run is fed input events (WorkflowStarted, ActivityCompleted, TimerFired, SignalReceived,
// ...) one at a time and answers each with the decision events it implies (ActivityScheduled,
// TimerScheduled, WorkflowCompleted, ...). Replaying a recorded history feeds its inputs again
// and checks that the same decisions come out (docs/reliability.md G4); a mismatch is an error, and
// the engine blocks the run instead of guessing.
//
// Invariants: no I/O, no clock, no randomness, no goroutines, no map iteration where order
// matters. Time is the time of the input event; ids derive from the run id and step paths.
package interpreter
