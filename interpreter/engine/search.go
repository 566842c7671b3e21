package engine

import "github.com/wendflow/wend/history"

// keepSearch puts the run's current search values (the workflow's `search:`) on rec, the
// record about to be committed with the events that changed them, so the values are as
// durable as the state they come from and a replay computes the same ones. A value of the
// wrong type or a failed expression is a note on the record and a log line, never a failure
// of the run. lr.mu is held.
func (e *Engine) keepSearch(lr *liveRun, rec *history.Run) {
	if lr.interp == nil || lr.w == nil || len(lr.w.SearchOrder) == 0 {
		return
	}
	for _, p := range lr.interp.KeepSearch(rec) {
		e.logf("wend: run %s: %s (the field has no value until this is fixed; the run goes on)", rec.RunID, p)
	}
}
