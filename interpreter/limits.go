package interpreter

import (
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// Structural limits (docs/reliability.md G7, L1-L4). Over one, the step or run fails with category
// structural_limit and a message naming the limit — never silently. Engines warn at 80 %.
const (
	MaxEvents  = spec.MaxRunEvents // events in one run's history; continue_as_new starts afresh
	MaxPending = 2_000             // activities, timers or child workflows open at once in one run
	MaxSignals = 5_000             // received signals not yet consumed; one more fails the run

	// MaxHistoryBytes caps the payload bytes of one run's history (Temporal's error threshold).
	MaxHistoryBytes = 50 << 20
)

// Near is a structural limit a run has reached 80 % of.
type Near struct {
	What     string // e.g. "open activities"
	N, Limit int
}

func (n Near) String() string { return fmt.Sprintf("%d %s of the %d allowed", n.N, n.What, n.Limit) }

// NearLimits lists the structural limits the run is within 20 % of, for an engine to warn
// about before the run fails on one (docs/reliability.md G7: a warning well
// below the error).
func (r *Run) NearLimits() []Near {
	var out []Near
	near := func(n, limit int, what string) {
		if n >= limit*8/10 {
			out = append(out, Near{What: what, N: n, Limit: limit})
		}
	}
	near(r.count, MaxEvents, "history events")
	near(r.bytes, MaxHistoryBytes, "history payload bytes")
	near(r.activities.len(), MaxPending, "open activities")
	near(r.timers.len(), MaxPending, "open timers")
	near(r.children.len(), MaxPending, "open child workflows")
	near(r.unconsumedSignals(), MaxSignals, "unconsumed signals")
	return out
}

// overPending explains why one more open item of a kind would pass MaxPending, or "".
func (r *Run) overPending(open int, what string) string {
	if open < MaxPending {
		return ""
	}
	return fmt.Sprintf("the run already has %d open %s, the limit", MaxPending, what)
}

func limitFailure(msg string) *history.Failure {
	return &history.Failure{Category: history.CategoryStructuralLimit, PropagationKind: "structural_limit",
		Type: "StructuralLimit", Message: msg, NonRetryable: true}
}

// overLimit ends a run that hit a whole-run limit: open work is cancelled and the run fails.
func (r *Run) overLimit(msg string) {
	if r.closed != "" {
		return
	}
	r.root.cancel()
	if r.compensating != nil {
		r.compensating.cancel()
	}
	r.close(history.WorkflowFailed, history.Closed{Failure: limitFailure(msg)})
}

// limitReached fails the run on a limit the hosting engine measured (Temporal counts its own
// history, about 2.5 events per wend event): the same end as a limit wend counts itself.
func (r *Run) limitReached(ev history.Event) error {
	l, err := history.DataOf[history.LimitReached](ev)
	if err != nil {
		return err
	}
	if r.root == nil {
		return fmt.Errorf("apply %s: run not started", ev.Type)
	}
	r.overLimit(l.Message)
	return nil
}

// terminate stops the run at once: open work is cancelled, no compensation, no on_cancel.
func (r *Run) terminate(ev history.Event) error {
	c, err := history.DataOf[history.CancelRequest](ev)
	if err != nil {
		return err
	}
	r.terminating = true
	if r.root != nil {
		r.root.cancel()
	}
	if r.compensating != nil {
		r.compensating.cancel()
	}
	r.close(history.WorkflowTerminated, history.Closed{Failure: &history.Failure{Category: history.CategoryTerminated,
		PropagationKind: "terminated", Type: "Terminated", Message: "terminated: " + c.Reason}})
	return nil
}
