package interpreter_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// saga is the seed's example: three steps, two with compensations reading their snapshot.
const saga = sim.Head + `
compensate_on_failure: true
on_cancel:
  - activity: p.notify_cancelled
    with: "${{ state }}"
steps:
  - id: create_remote_user
    activity: p.create_remote_user
    set: {remote_user_id: "${{ output.id }}"}
    compensate_with:
      activity: p.delete_remote_user
      with: {id: "${{ state.remote_user_id }}", sub: "${{ state.subscription_id }}"}
  - id: create_subscription
    activity: p.create_subscription
    set: {subscription_id: "${{ output.id }}"}
    compensate_with:
      activity: p.cancel_subscription
      with: {id: "${{ state.subscription_id }}"}
  - id: send_welcome_email
    activity: p.send_welcome_email
  - wait_for_signal: done
`

func sagaAnswers(failOn string) sim.Answer {
	return func(act string, in any, _ int) (any, *history.Failure) {
		switch act {
		case failOn:
			return nil, &history.Failure{Type: "Boom", Message: act + " failed", NonRetryable: true}
		case "create_remote_user":
			return map[string]any{"id": "u-1"}, nil
		case "create_subscription":
			return map[string]any{"id": "s-1"}, nil
		}
		return in, nil
	}
}

func compensationSteps(evs []history.Event, typ history.EventType) []string {
	var out []string
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e.Step)
		}
	}
	return out
}

func TestCancelCompensatesInReverseWithSnapshots(t *testing.T) {
	s := sim.New(t, saga, nil)
	s.RunActivities(sagaAnswers(""))
	s.Apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: "user left"})})
	var calls []string
	s.RunActivities(func(act string, in any, _ int) (any, *history.Failure) {
		calls = append(calls, fmt.Sprintf("%s %v", act, in))
		return nil, nil
	})
	want := []string{
		"cancel_subscription map[id:s-1]",
		// delete_remote_user sees the state right after create_remote_user: no subscription yet.
		"delete_remote_user map[id:u-1 sub:<nil>]",
		"notify_cancelled map[remote_user_id:u-1 subscription_id:s-1]",
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if got := compensationSteps(s.Events, history.CompensationCompleted); !reflect.DeepEqual(got, []string{"steps[1]", "steps[0]"}) {
		t.Fatalf("compensated %v", got)
	}
	if s.Last().Type != history.WorkflowCancelled {
		t.Fatalf("closed with %s", s.Last().Type)
	}
	s.ReplayOK(t)
}

func TestFailureCompensatesWhenAsked(t *testing.T) {
	s := sim.New(t, saga, nil)
	s.RunActivities(sagaAnswers("send_welcome_email"))
	c := s.Closed(t)
	if s.Last().Type != history.WorkflowFailed || c.Failure.Message != "send_welcome_email failed" || c.ClosedReason != "" {
		t.Fatalf("closed %s %+v", s.Last().Type, c)
	}
	if got := compensationSteps(s.Events, history.CompensationCompleted); !reflect.DeepEqual(got, []string{"steps[1]", "steps[0]"}) {
		t.Fatalf("compensated %v", got)
	}
	if n := len(compensationSteps(s.Events, history.ActivityScheduled)); n != 5 { // 3 steps + 2 compensations, no on_cancel
		t.Fatalf("%d activities scheduled", n)
	}
	s.ReplayOK(t)
}

// TestSagaEveryFailingPosition is docs/reliability.md F1: a 10-step saga failing at step k
// compensates steps k-1..1 in reverse order, each exactly once; steps without compensation are
// skipped.
func TestSagaEveryFailingPosition(t *testing.T) {
	var b strings.Builder
	b.WriteString(sim.Head + "compensate_on_failure: true\nsteps:\n")
	for i := 1; i <= 10; i++ {
		if i%4 == 0 {
			fmt.Fprintf(&b, "  - {id: s%d, activity: p.step, with: %d}\n", i, i) // no compensation
			continue
		}
		fmt.Fprintf(&b, "  - {id: s%d, activity: p.step, with: %d, compensate_with: {activity: p.undo, with: %d}}\n", i, i, i)
	}
	for k := 1; k <= 10; k++ {
		t.Run(fmt.Sprint("fail at ", k), func(t *testing.T) {
			s := sim.New(t, b.String(), nil)
			var undone []int
			s.RunActivities(func(act string, in any, _ int) (any, *history.Failure) {
				n := int(in.(float64))
				if act == "undo" {
					undone = append(undone, n)
					return nil, nil
				}
				if n == k {
					return nil, &history.Failure{Message: "no"}
				}
				return nil, nil
			})
			var want []int
			for i := k - 1; i >= 1; i-- {
				if i%4 != 0 {
					want = append(want, i)
				}
			}
			if !reflect.DeepEqual(undone, want) {
				t.Fatalf("undone %v, want %v", undone, want)
			}
			if got := len(compensationSteps(s.Events, history.CompensationStarted)); got != len(want) {
				t.Fatalf("%d CompensationStarted, want %d", got, len(want))
			}
			s.ReplayOK(t)
		})
	}
}

func TestCompensationFailurePolicy(t *testing.T) {
	for _, cont := range []bool{false, true} {
		t.Run(fmt.Sprint("continue_on_error=", cont), func(t *testing.T) {
			src := strings.Replace(saga, "compensate_on_failure: true", fmt.Sprintf("compensate_on_failure: true\ncompensation: {continue_on_error: %v}", cont), 1)
			s := sim.New(t, src, nil)
			s.RunActivities(func(act string, in any, attempt int) (any, *history.Failure) {
				switch act {
				case "send_welcome_email", "cancel_subscription":
					return nil, &history.Failure{Message: act + " failed", NonRetryable: true}
				}
				return map[string]any{"id": "x"}, nil
			})
			c := s.Closed(t)
			if c.ClosedReason != history.ClosedCompensationFailed {
				t.Fatalf("closed reason %q", c.ClosedReason)
			}
			deleted := len(compensationSteps(s.Events, history.CompensationCompleted)) == 1
			if deleted != cont {
				t.Fatalf("delete_remote_user compensated = %v with continue_on_error %v", deleted, cont)
			}
			if !reflect.DeepEqual(c.Uncompensated[0], "steps[1]") || (!cont && len(c.Uncompensated) != 2) {
				t.Fatalf("uncompensated %v", c.Uncompensated)
			}
			s.ReplayOK(t)
		})
	}
}

func TestCancelCompensatesInFlightActivity(t *testing.T) {
	s := sim.New(t, saga, nil)
	// create_remote_user is in flight (never answered) when the cancel comes.
	s.Apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{})})
	tail := types(s.Events)
	if !reflect.DeepEqual(tail[3:6], []history.EventType{history.ActivityCancelled, history.CompensationStarted, history.ActivityScheduled}) {
		t.Fatalf("events %v", tail)
	}
	cs, _ := history.DataOf[history.Compensation](s.Events[4])
	if !cs.Unknown {
		t.Fatal("compensation of an in-flight step not marked outcome_unknown")
	}
	s.RunActivities(sim.Echo)
	if s.Last().Type != history.WorkflowCancelled {
		t.Fatalf("closed %s", s.Last().Type)
	}
	s.ReplayOK(t)
}

func TestExecutionTimeoutWhileWaitingOnTimer(t *testing.T) {
	s := sim.New(t, sim.Head+"timeouts: {execution: 1h}\nsteps:\n  - delay: 2h\n", nil)
	s.FireTimers(sim.T0.Add(3 * time.Hour))
	got := types(s.Events)
	want := []history.EventType{history.WorkflowStarted, history.TimerScheduled, history.TimerScheduled,
		history.TimerFired, history.TimerCancelled, history.WorkflowTimedOut}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	c := s.Closed(t)
	if c.TimeoutKind != interpreter.ExecutionTimeout || c.Failure.Category != history.CategoryTimeout || c.Failure.PropagationKind != "timeout" {
		t.Fatalf("closed %+v", c)
	}
	if !s.Now.Equal(sim.T0.Add(time.Hour)) {
		t.Fatalf("timed out at %v, want the deadline", s.Now)
	}
	s.ReplayOK(t)
}

func TestRunTimeoutCancelsTheActivity(t *testing.T) {
	s := sim.New(t, sim.Head+"timeouts: {run: 30m}\nsteps:\n  - activity: p.slow\n", nil)
	s.FireTimers(sim.T0.Add(time.Hour))
	got := types(s.Events)
	if got[len(got)-2] != history.ActivityCancelled || s.Last().Type != history.WorkflowTimedOut || s.Closed(t).TimeoutKind != interpreter.RunTimeout {
		t.Fatalf("events %v", got)
	}
	s.ReplayOK(t)
}

func TestCompletedRunDisarmsTimeouts(t *testing.T) {
	s := sim.New(t, sim.Head+"timeouts: {run: 1h, execution: 2h}\nsteps:\n  - activity: p.x\n", nil)
	s.RunActivities(sim.Echo)
	if len(s.Timers()) != 0 || s.Last().Type != history.WorkflowCompleted {
		t.Fatalf("timers left %v, last %s", s.Timers(), s.Last().Type)
	}
}
