// Package runview is the read side of a run: the only code that folds a run's record and
// history into what people read. Fold reads the events once into a View — the workflow's
// header, each activity with its attempts, timers, signals, children, compensations, every
// failure and the operator metrics — and the View answers the rest: the step tree with
// readable names (Steps, Name), what an open run waits for (Waits), and what only a replay of
// the pure interpreter can say, the public state and the signal waits (Live).
//
// Everything a person or a tool reads of a run comes from here: the history export
// (history/export) is the View's sections as JSON, `wend show` and the web UI lay the View
// out, GET /v1/runs/{id} is its Detail, and progress lines phrase events with EventLine. A
// failure becomes text in one place, FailureText. Adding an event type, or a field to one,
// means teaching Fold (and EventDetail / EventLine when it deserves words) and nothing else
// on the read side.
//
// It imports history, spec and the interpreter (for the replay), never a store or the engine:
// a view is a function of the record and events it is given.
package runview
