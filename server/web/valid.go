package web

import (
	"slices"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/runview"
)

// validActions are the buttons a run's status allows, so the page offers nothing the server
// would refuse for the run as it is: cancel, terminate and repair an open run; retry a run
// that failed (not by a timeout), whose compensations did not run, and that is the newest of
// its workflow id (the engine retries only that one). newest is the workflow id's newest run.
func validActions(run history.Run, view *runview.View, newest string) []runAction {
	var out []runAction
	for _, a := range runActions {
		ok := false
		switch a.Name {
		case "cancel", "terminate", "repair":
			ok = run.Open()
		case "retry":
			ok = run.Status == history.StatusFailed && run.ClosedReason != history.ClosedTimedOut &&
				run.RunID == newest && (view == nil || len(view.Compensations) == 0)
		}
		if ok {
			out = append(out, a)
		}
	}
	return out
}

// signalNames are the names the signal form offers: those the run waits for now, then those
// its workflow declares (`signals:`), each once. declared reports whether the workflow
// declares its signals, in which case no other name would be accepted.
func signalNames(view *runview.View) (names []string, declared bool) {
	if view == nil {
		return nil, false
	}
	for _, w := range view.Waits() {
		if w.Kind == runview.WaitSignal && !slices.Contains(names, w.Signal) {
			names = append(names, w.Signal)
		}
	}
	if w := view.Spec(); w != nil && w.Signals != nil {
		declared = true
		var decl []string
		for n := range w.Signals {
			if !slices.Contains(names, n) {
				decl = append(decl, n)
			}
		}
		slices.Sort(decl)
		names = append(names, decl...)
	}
	return names, declared
}
