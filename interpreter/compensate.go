package interpreter

import (
	"maps"
	"strings"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// done is a step that completed and can be undone: its compensation runs with the public
// state as it was right after the step completed.
type undoable struct {
	n        *node
	snapshot map[string]any
	unknown  bool // its activity was in flight when the cancel came: outcome unknown
}

// remember records a completed step with compensate_with, in completion order.
func (n *node) remember(unknown bool) {
	if len(n.s.CompensateWith) == 0 {
		return
	}
	n.r.undo = append(n.r.undo, undoable{n: n, snapshot: publicState(n.r.state), unknown: unknown})
}

// publicState copies the state without the engine's reserved keys (those starting with _).
func publicState(st map[string]any) map[string]any {
	out := make(map[string]any, len(st))
	for k, v := range st {
		if !strings.HasPrefix(k, "_") {
			out[k] = v
		}
	}
	return out
}

// unwinding is the end of a run that compensates: why, and what comes after.
type unwinding struct {
	reason  string           // "cancel" or "failure"
	failure *history.Failure // what the run will close with
	queue   []undoable       // reverse completion order
	next    int
	failed  []string // steps whose compensation failed for good
	skipped []string // steps not compensated because an earlier compensation failed

	onCancelDone    bool
	onCancelFailure *history.Failure
}

// unwind runs the compensations of completed steps in reverse completion order, then finish.
func (r *Run) unwind(reason string, f *history.Failure) {
	u := &unwinding{reason: reason, failure: f}
	for i := len(r.undo) - 1; i >= 0; i-- {
		u.queue = append(u.queue, r.undo[i])
	}
	r.unwinding = u
	r.nextCompensation()
}

func (r *Run) nextCompensation() {
	u := r.unwinding
	if u.next >= len(u.queue) {
		r.afterCompensations()
		return
	}
	c := u.queue[u.next]
	payload := history.Compensation{Step: c.n.path, Reason: u.reason, Unknown: c.unknown}
	r.emit(history.Event{Type: history.CompensationStarted, Step: c.n.path, Data: history.MustData(payload)})
	sc := c.n.sc.child(nil)
	sc.state = maps.Clone(c.snapshot)
	q := &seq{r: r, steps: c.n.s.CompensateWith, sc: sc, done: func(_ any, f *history.Failure) {
		if f != nil {
			payload.Failure = f
			r.emit(history.Event{Type: history.CompensationFailed, Step: c.n.path, Data: history.MustData(payload)})
			u.failed = append(u.failed, c.n.path)
			if !r.w.CompensationContinueOnError {
				for _, rest := range u.queue[u.next+1:] {
					u.skipped = append(u.skipped, rest.n.path)
				}
				u.next = len(u.queue)
				r.afterCompensations()
				return
			}
		} else {
			r.emit(history.Event{Type: history.CompensationCompleted, Step: c.n.path, Data: history.MustData(payload)})
		}
		u.next++
		r.nextCompensation()
	}}
	r.compensating = q
	q.start()
}

// afterCompensations runs on_cancel after a cancel, then closes the run.
func (r *Run) afterCompensations() {
	u := r.unwinding
	if u.reason == "cancel" && len(r.onCancelSteps()) > 0 && !u.onCancelDone {
		u.onCancelDone = true
		q := &seq{r: r, steps: r.onCancelSteps(), sc: &scope{steps: &table[any]{}}, done: func(_ any, f *history.Failure) {
			if f != nil {
				u.onCancelFailure = f
			}
			r.closeUnwound()
		}}
		r.compensating = q
		q.start()
		return
	}
	r.closeUnwound()
}

func (r *Run) closeUnwound() {
	u := r.unwinding
	c := history.Closed{Failure: u.failure}
	if len(u.failed) > 0 {
		c.ClosedReason = history.ClosedCompensationFailed
		c.Uncompensated = append(append([]string(nil), u.failed...), u.skipped...)
	}
	if u.reason == "cancel" {
		r.close(history.WorkflowCancelled, c)
		return
	}
	r.close(history.WorkflowFailed, c)
}

// inFlightUndoables are running activity steps with a compensation: when a cancel comes their
// outcome is unknown, so they are compensated too (with the state at the cancel).
func (r *Run) inFlightUndoables() []*node {
	var out []*node
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil || n.state != running {
			return
		}
		if n.s.Kind == spec.KindActivity && len(n.s.CompensateWith) > 0 && r.activities.at(n.execID) == n {
			out = append(out, n)
		}
		if n.branches != nil {
			for _, k := range n.kids {
				walk(k)
			}
			for _, q := range n.seqs {
				if !q.stopped {
					walk(q.cur)
				}
			}
		}
		if n.catch != nil && !n.catch.stopped {
			walk(n.catch.cur)
		}
	}
	if r.root != nil && !r.root.stopped {
		walk(r.root.cur)
	}
	return out
}
