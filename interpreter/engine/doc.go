// Package engine drives runs: it feeds the interpreter's decisions into a history.Store
// (events and the tasks they create, in one commit), hands activity tasks to the Activities
// it is given, fires timers on its Clock, and takes signals and cancels. It also queues runs
// past their workflow's `concurrency:` limit (runqueue.go), holds activities to their declared
// limits (limits.go), keeps a run's search fields (search.go), and hands each try's plugin a
// W3C trace context derived from the run (internal/tracecontext).
//
// Words used here:
//   - The edge is where requests from clients enter the engine (Start, Signal, Cancel...) and
//     are checked against the limits on ids and payloads before anything is recorded (edge.go).
//   - To carry a try is for the goroutine that drained a run's inputs to run that run's next
//     try itself once the drain is done, instead of starting a new goroutine for it; the
//     carrier (activity.go) holds that try until then.
//
// Invariants:
//   - A decision is acted on only after the commit that records it returned: an activity is
//     called only once ActivityScheduled is durable, so a crash re-runs the attempt with the
//     same activity_execution_id (at least once), never skips it.
//   - Inputs to one run are applied one at a time, in history order; runs proceed
//     concurrently and share commits through the store.
//   - An outcome the run no longer expects (a superseded attempt) is dropped and counted,
//     never recorded.
//   - A run whose state machine left memory (idle.go) is rebuilt by replay under its lock
//     before any input is applied to it; its timers never leave the scheduler's heap.
//   - A failed commit stops the engine: nothing more is written (fsyncgate); a restart
//     resumes from what was committed.
package engine
