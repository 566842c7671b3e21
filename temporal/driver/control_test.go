package driver

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/temporal"
)

func TestSignalsTimeoutAndDedupe(t *testing.T) {
	src := sim.Head + `steps:
  - id: ok
    wait_for_signal: go
    timeout: 1h
  - delay: 30m
  - id: early
    wait_for_signal: early
  - id: late
    wait_for_signal: never
    timeout: 1m
    catch:
      - activity: p.echo
        with: "${{ error.type }}"
output: {ok: "${{ steps.ok.output }}", early: "${{ steps.early.output }}"}
`
	sigs := []wire.Signal{
		{Name: "go", Data: []byte(`{"n":1}`), SignalID: "s1"},
		{Name: "go", Data: []byte(`{"n":"resent"}`), SignalID: "s1"}, // a resend: dropped
		{Name: "early", Data: []byte(`"before its wait"`), SignalID: "s2"},
	}
	e, p := newEnv(t)
	e.RegisterDelayedCallback(func() {
		for _, s := range sigs {
			e.SignalWorkflow(wire.SignalName, s)
		}
	}, 10*time.Minute)
	evs := run(t, e, startInput(src, nil, nil))
	if got := output(t, e); got != `{"early":"before its wait","ok":{"n":1}}` {
		t.Fatalf("output %s", got)
	}
	if n := len(ofType(evs, history.SignalReceived)); n != 2 {
		t.Fatalf("%d signals recorded, want 2 (the resend is dropped)", n)
	}
	// The unsignalled wait timed out and its catch ran.
	tries := p.triesOf("echo")
	if len(tries) != 1 || string(tries[0].Call.Input) != `"Timeout"` {
		t.Fatalf("catch tries %+v", tries)
	}

	local := sim.New(t, src, nil)
	local.Now = sim.T0.Add(10 * time.Minute)
	for _, s := range sigs[:1] {
		local.Apply(history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: s.Name, Data: s.Data, SignalID: s.SignalID})})
	}
	s := sigs[2]
	local.Apply(history.Event{Type: history.SignalReceived, Data: history.MustData(history.Signal{Name: s.Name, Data: s.Data, SignalID: s.SignalID})})
	local.FireTimers(sim.T0.Add(3 * time.Hour))
	local.RunActivities(sim.Echo)
	sameAsLocal(t, evs, local)
}

const cancelSrc = sim.Head + `on_cancel:
  - activity: p.echo
    with: {on_cancel: true}
steps:
  - id: a
    activity: p.echo
    with: {x: 1}
    compensate_with:
      - activity: p.echo
        with: {undo: a}
  - id: s
    activity: p.slow
    compensate_with:
      - activity: p.echo
        with: {undo: s}
`

// TestCancelCompensatesCompletedAndInFlight: Temporal's cancel becomes wend's CancelRequested
// with the reason sent first on wire.CancelSignalName; the completed step and the one in
// flight are compensated (newest first) on the disconnected context, on_cancel runs, the
// in-flight try is cancelled, and Temporal closes the run as Canceled.
func TestCancelCompensatesCompletedAndInFlight(t *testing.T) {
	for _, tc := range []struct{ name, reason, want string }{
		{"with a reason", "ops said so", "ops said so"},
		{"without", "", "cancel requested through Temporal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, p := newEnv(t)
			p.onSlow = func() {
				if tc.reason != "" {
					e.SignalWorkflow(wire.CancelSignalName, wire.Cancel{Reason: tc.reason})
				}
				e.CancelWorkflow()
			}
			evs := run(t, e, startInput(cancelSrc, nil, nil))
			var ce *temporal.CanceledError
			if err := e.GetWorkflowError(); !errors.As(err, &ce) {
				t.Fatalf("workflow error %v, want Temporal's Canceled", err)
			}
			c := closedOfRun(t, evs)
			if evs[len(evs)-1].Type != history.WorkflowCancelled || c.Failure.Message != "cancelled: "+tc.want {
				t.Fatalf("closed %s %+v", evs[len(evs)-1].Type, c.Failure)
			}
			var inputs []string
			for _, tr := range p.triesOf("echo")[1:] {
				inputs = append(inputs, string(tr.Call.Input))
			}
			want := []string{`{"undo":"s"}`, `{"undo":"a"}`, `{"on_cancel":true}`}
			if !slices.Equal(inputs, want) {
				t.Fatalf("after the cancel the plugin ran %q, want %q", inputs, want)
			}
			slow := p.triesOf("slow")[0]
			if !slices.Contains(p.cancelledIDs(), slow.ActivityID) {
				t.Fatalf("the in-flight try %s was not cancelled (cancelled: %v)", slow.ActivityID, p.cancelledIDs())
			}
			comp := ofType(evs, history.CompensationCompleted)
			if len(comp) != 2 {
				t.Fatalf("%d compensations completed", len(comp))
			}
			cs, _ := history.DataOf[history.Compensation](comp[0])
			if cs.Step != "steps[1]" || !cs.Unknown {
				t.Fatalf("first compensation %+v, want the in-flight step with outcome unknown", cs)
			}

			local := sim.New(t, cancelSrc, nil)
			local.Step(sim.Echo)
			local.Cancel(tc.want)
			local.RunActivities(sim.Echo)
			sameAsLocal(t, evs, local)
		})
	}
}

// TestSagaCompensatesOnFailure: with compensate_on_failure a failed run undoes its completed
// steps, newest first, then fails.
func TestSagaCompensatesOnFailure(t *testing.T) {
	src := sim.Head + `compensate_on_failure: true
steps:
  - activity: p.echo
    with: reserve
    compensate_with:
      - activity: p.echo
        with: release
  - activity: p.echo
    with: charge
    compensate_with:
      - activity: p.echo
        with: refund
  - activity: p.fail
    with: {type: Declined, non_retryable: true}
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, nil, nil))
	c := wendFailure(t, e, history.WorkflowFailed)
	if c.Failure == nil || c.Failure.Type != "Declined" {
		t.Fatalf("failure %+v", c.Failure)
	}
	var inputs []string
	for _, tr := range p.triesOf("echo") {
		inputs = append(inputs, string(tr.Call.Input))
	}
	if want := []string{`"reserve"`, `"charge"`, `"refund"`, `"release"`}; !slices.Equal(inputs, want) {
		t.Fatalf("plugin ran %q, want %q", inputs, want)
	}
	local := sim.New(t, src, nil)
	local.RunActivities(failUntil("Declined", 0, true))
	sameAsLocal(t, evs, local)
}
