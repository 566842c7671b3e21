// Package simtest drives the real interpreter the way the engine does, on a virtual clock and
// with no store or plugins, so tests get the histories the interpreter really writes: the
// interpreter's own tests, those of the packages that read histories (runview,
// history/export, internal/cli), and the Temporal driver's and backend's.
//
// A Sim numbers and times every event it records, keeps the activities and timers the run
// owes, and lets a test answer them in order. It imports only interpreter, history and spec,
// and only tests import it (internal/arch checks both).
package simtest
