package interpreter

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

type nodeState uint8

const (
	running nodeState = iota
	finished
	cancelled
)

// node is one occurrence of a step. It reports to its parent exactly once through done,
// unless it is cancelled first.
type node struct {
	r     *Run
	s     *spec.Step
	path  string // instance path: the step's path with for_each item numbers
	sc    *scope
	done  func(out any, f *history.Failure)
	state nodeState

	// What only some kinds of step use is held apart (newNode), so that a waiting step, most
	// of what a waiting run keeps in memory, is small.
	*activityState // activity steps; nil on others
	*branches      // steps, parallel and for_each; nil on others

	childID   string    // run_workflow: the child's workflow id
	waitData  []byte    // run_workflow / wait_for_workflow: the schedule payload
	timerID   string    // delay
	timeoutID string    // wait timeouts
	waiting   string    // signal name while waiting
	waitSince time.Time // when the signal wait began

	catch *seq
}

// activityState is an activity step's: its tries.
type activityState struct {
	execID  string
	sched   history.ActivitySchedule
	fills   []spec.SecretFill // where sched.Input's secret references are
	attempt int
	tries   int
	// attemptBase is the attempt a new series of tries started after (wend retry): tries are
	// counted from it. retryAt is when the pending retry is due.
	attemptBase int
	retryAt     time.Time
	retry       *spec.Retry
	progress    []byte // the latest heartbeat progress, handed to the next try
}

// branches are a steps, parallel or for_each step's.
type branches struct {
	kids []*node // parallel branches
	seqs []*seq  // steps body, for_each items

	outs    []any // parallel and for_each outputs
	pending int
	items   []any
	next    int // next for_each item (or shard) to start
	active  int
	base    int                // a shard child's for_each: the global index of its first item
	shardIn history.ShardInput // sharded for_each: what each child's input holds besides its items
}

// newNode makes a step's node, with what its kind uses in the same allocation.
func (r *Run) newNode(s *spec.Step, sc *scope, done func(any, *history.Failure)) *node {
	var n *node
	switch s.Kind {
	case spec.KindActivity:
		an := &struct {
			node
			activityState
		}{}
		n = &an.node
		n.activityState = &an.activityState
	case spec.KindSteps, spec.KindParallel, spec.KindForEach:
		bn := &struct {
			node
			branches
		}{}
		n = &bn.node
		n.branches = &bn.branches
	default:
		n = &node{}
	}
	n.r, n.s, n.path, n.sc, n.done = r, s, sc.instancePath(s.Path), sc, done
	return n
}

func (n *node) env(refs []string, extra map[string]any) map[string]any {
	return n.r.env(n.sc, refs, extra)
}

func (n *node) start() {
	if n.s.If != nil {
		v, err := n.s.If.Eval(n.env(n.s.If.Steps, nil))
		if err != nil {
			n.stepFailed(exprFailure(n, "if", err))
			return
		}
		if b, _ := v.(bool); !b {
			n.state = finished
			n.done(nil, nil)
			return
		}
	}
	switch n.s.Kind {
	case spec.KindActivity:
		n.startActivity()
	case spec.KindSteps:
		n.startSteps()
	case spec.KindParallel:
		n.startParallel()
	case spec.KindForEach:
		n.startForEach()
	case spec.KindDelay:
		n.startDelay()
	case spec.KindWaitForSignal:
		n.startSignalWait()
	case spec.KindRunWorkflow:
		n.startChild()
	case spec.KindWaitForWorkflow:
		n.startWorkflowWait()
	case spec.KindContinueAsNew:
		n.continueAsNew()
	case spec.KindFail:
		n.failStep()
	default:
		n.stepFailed(&history.Failure{Category: history.CategoryInternal, Message: "unknown step kind " + string(n.s.Kind)})
	}
}

// complete finishes the step with its output: `set` is merged into the state, the output
// is recorded under the step's id, and the parent goes on.
func (n *node) complete(out any) {
	if n.state != running {
		return
	}
	n.cancelTimers()
	if len(n.s.Set) > 0 {
		extra := map[string]any{"output": out}
		if n.s.Kind == spec.KindWaitForSignal {
			extra["signal"] = out
		}
		var refs []string
		for _, f := range n.s.Set {
			refs = append(refs, f.Value.StepRefs()...)
		}
		env := n.env(refs, extra)
		vals := make([]any, len(n.s.Set))
		for i, f := range n.s.Set {
			v, err := f.Value.Eval(env)
			if err != nil {
				n.stepFailed(exprFailure(n, "set."+f.Key, err))
				return
			}
			vals[i] = v
		}
		for i, f := range n.s.Set {
			n.r.state[f.Key] = vals[i]
		}
	}
	n.remember(false)
	n.finish(out)
}

func (n *node) finish(out any) {
	n.state = finished
	if n.s.ID != "" {
		n.sc.setStep(n.s.ID, out)
	}
	n.done(out, nil)
}

// stepFailed records a failure that starts at this step (not in an activity) and fails it.
func (n *node) stepFailed(f *history.Failure) {
	if f.Step == "" {
		f.Step = n.path
	}
	n.r.emit(history.Event{Type: history.StepFailed, Step: n.path, Data: history.MustData(history.AttemptFailure{Failure: *f})})
	n.fail(f)
}

// fail ends the step with a failure, unless `catch` handles it: then the catch steps run and
// their outcome is the step's.
func (n *node) fail(f *history.Failure) {
	if n.state != running {
		return
	}
	n.cancelChildren()
	n.cancelTimers()
	if len(n.s.Catch) > 0 && n.catch == nil {
		errVal := map[string]any{"type": f.Type, "message": f.Message, "non_retryable": f.NonRetryable,
			"category": f.Category, "attempt": f.Attempt}
		n.catch = &seq{r: n.r, steps: n.s.Catch, sc: n.sc.child(map[string]any{"error": errVal}),
			done: func(out any, f2 *history.Failure) {
				if f2 != nil {
					n.state = finished
					n.done(nil, f2)
					return
				}
				n.finish(out)
			}}
		n.catch.start()
		return
	}
	n.state = finished
	n.done(nil, f)
}

// cancel stops the step and everything under it, recording what it cancels.
func (n *node) cancel() {
	if n.state != running {
		return
	}
	n.state = cancelled
	n.cancelChildren()
	n.cancelTimers()
	if n.activityState != nil && n.execID != "" && n.r.activities.at(n.execID) == n {
		n.r.activities.del(n.execID)
		n.r.emit(history.Event{Type: history.ActivityCancelled, Step: n.path, ActivityExecutionID: n.execID, Attempt: n.attempt})
	}
	if n.waiting != "" {
		n.r.removeWaiter(n)
	}
	if n.childID != "" && n.r.children.at(n.path) == n {
		// The child goes with its parent: cancelled (or terminated) through the engine.
		n.r.emit(history.Event{Type: history.ChildWorkflowCancelRequested, Step: n.path,
			Data: history.MustData(history.CancelRequest{WorkflowID: n.childID, Reason: "parent run ended", Terminate: n.r.terminating})})
	}
	n.r.children.del(n.path)
	if n.catch != nil {
		n.catch.cancel()
	}
}

func (n *node) cancelChildren() {
	if n.branches == nil {
		return
	}
	for _, k := range n.kids {
		k.cancel()
	}
	for _, q := range n.seqs {
		q.cancel()
	}
}

func (n *node) cancelTimers() {
	for _, id := range []string{n.timerID, n.timeoutID} {
		if id != "" && n.r.timers.at(id).n == n {
			n.r.timers.del(id)
			n.r.emit(history.Event{Type: history.TimerCancelled, Step: n.path, Data: history.MustData(history.TimerRef{TimerID: id})})
		}
	}
}

// with evaluates the step's `with` (def when it has none); on an expression error the step
// fails and ok is false.
func (n *node) with(def any) (v any, ok bool) {
	if n.s.With == nil {
		return def, true
	}
	v, err := n.s.With.Eval(n.env(n.s.With.StepRefs(), nil))
	if err != nil {
		n.stepFailed(exprFailure(n, "with", err))
		return nil, false
	}
	return v, true
}

// withJSON is an activity's input: its `with` evaluated and encoded, or a literal `with`'s JSON
// encoded once for every run of the workflow (spec.Value.LiteralJSON), which has no secret
// references and needs no environment.
func (n *node) withJSON() (json.RawMessage, bool) {
	if lit, ok := n.s.With.LiteralJSON(); ok {
		return lit, true
	}
	v, ok := n.withFills()
	if !ok {
		return nil, false
	}
	return mustJSON(v), true
}

// withFills evaluates an activity's `with` and notes where its secret references landed.
func (n *node) withFills() (v any, ok bool) {
	if n.s.With == nil {
		return nil, true
	}
	v, fills, err := n.s.With.EvalFills(n.env(n.s.With.StepRefs(), nil))
	if err != nil {
		n.stepFailed(exprFailure(n, "with", err))
		return nil, false
	}
	n.fills = fills
	return v, true
}

func exprFailure(n *node, what string, err error) *history.Failure {
	return &history.Failure{Category: history.CategoryExpression, PropagationKind: "step", Type: "ExpressionError",
		Message: what + ": " + err.Error(), NonRetryable: true, Step: n.path}
}
