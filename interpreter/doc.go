// Package interpreter is wend's deterministic core: it turns a workflow spec and the facts of
// a run's history into the run's next decisions.
//
// A Run is fed input events (WorkflowStarted, ActivityCompleted, TimerFired, SignalReceived,
// ...) one at a time and answers each with the decision events it implies (ActivityScheduled,
// TimerScheduled, WorkflowCompleted, ...). Replaying a recorded history feeds its inputs again
// and checks that the same decisions come out (docs/reliability.md G4); a mismatch is an error, and
// the engine blocks the run instead of guessing.
//
// A host drives a Run: it feeds it inputs, carries out its decisions (calls activities, arms
// timers, starts children) and keeps its history. There are three: the engine
// (interpreter/engine, over a store and plugins), the Temporal driver (temporal/driver) and the
// in-memory host (interpreter/sim, on a virtual clock, under `wend test` and the tests).
//
// Beyond that fold it answers what a host asks of a run: whether it has room for one more
// signal (SignalRoom), its search fields' values (SearchValues, for `search:`), queries over
// its history (Query), and the child runs a sharded for_each (`shard: N`) starts.
//
// Room is how many more events or signals a run's history can take below its limits
// (MaxEvents, MaxSignals): a for_each whose items cannot fit fails before it starts
// (foreach_room.go), and a signal past the limit is refused (signal_room.go).
//
// Invariants: no I/O, no clock, no randomness, no goroutines, no map iteration where order
// matters. Time is the time of the input event; ids derive from the run id and step paths.
package interpreter
