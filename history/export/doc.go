// Package export turns one run's record and history into the history export (`schema:
// wend.history-export/v1`; docs/design.md, The export): a single JSON document that says what the
// durable history says — the workflow, every event, each activity with its attempts, timers,
// signals, children, compensations, every failure with its failure_category /
// propagation_kind / non_retryable, and operator_metrics — plus Render, the same facts laid
// out for a person (`wend show`).
//
// The sections are the run's view as package runview folds it (the only code that reads a
// history for people); this package adds the events as stored, their integrity and the links
// to related runs. The export is derived from the history alone, never from live engine state
// or the clock: exporting the same history twice gives the same bytes, and an operator can
// trust it as the durable result. Whatever the history does not say (for example when a
// retry's try actually began, as the engine records no ActivityStarted today) is left out
// rather than guessed. schemas/history-export.schema.json describes it.
package export
