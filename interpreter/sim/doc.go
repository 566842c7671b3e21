// Package sim is the in-memory host of the interpreter: it drives interpreter.Run as the
// engine does, on a virtual clock, with no store, plugin or goroutine, so a run's history is
// the one the interpreter really writes.
//
// It is one of the interpreter's three hosts (package interpreter says what a host is). A
// Host records each input at its virtual time and the decisions it yields, and keeps the
// agenda of what the world owes the run: the activity tries asked for (a first try at once, a
// retry at its available_at), the armed timers, and whatever its user queued (a try's outcome,
// a signal, a child's end), each due at a virtual time. A cancelled try, timer or child is
// withdrawn from the agenda, and a superseded try's outcome is dropped as the engine drops it.
//
// Two users build on it. `wend test` (package testsuite) answers the tries from a case's mocks
// and plays the agenda in time order. Tests use Sim, which lets a test answer tries and fire
// timers one at a time and checks the history as it goes: the interpreter's tests, those of
// the packages that read histories (runview, history/export, internal/commands), and the Temporal
// driver's and backend's, which compare the driver's decisions with this host's.
//
// It imports only interpreter, history and spec (internal/arch checks), and not package
// testing: a Sim takes the small TB interface a *testing.T satisfies.
package sim
