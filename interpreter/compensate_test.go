package interpreter

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// saga is the seed's example: three steps, two with compensations reading their snapshot.
const saga = head + `
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

func sagaAnswers(failOn string) answer {
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
	s := newSim(t, saga, nil)
	s.runActivities(sagaAnswers(""))
	s.apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{Reason: "user left"})})
	var calls []string
	s.runActivities(func(act string, in any, _ int) (any, *history.Failure) {
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
	if got := compensationSteps(s.events, history.CompensationCompleted); !reflect.DeepEqual(got, []string{"steps[1]", "steps[0]"}) {
		t.Fatalf("compensated %v", got)
	}
	if s.last().Type != history.WorkflowCancelled {
		t.Fatalf("closed with %s", s.last().Type)
	}
	s.replayOK(t)
}

func TestFailureCompensatesWhenAsked(t *testing.T) {
	s := newSim(t, saga, nil)
	s.runActivities(sagaAnswers("send_welcome_email"))
	c := s.closed(t)
	if s.last().Type != history.WorkflowFailed || c.Failure.Message != "send_welcome_email failed" || c.ClosedReason != "" {
		t.Fatalf("closed %s %+v", s.last().Type, c)
	}
	if got := compensationSteps(s.events, history.CompensationCompleted); !reflect.DeepEqual(got, []string{"steps[1]", "steps[0]"}) {
		t.Fatalf("compensated %v", got)
	}
	if n := len(compensationSteps(s.events, history.ActivityScheduled)); n != 5 { // 3 steps + 2 compensations, no on_cancel
		t.Fatalf("%d activities scheduled", n)
	}
	s.replayOK(t)
}

// TestSagaEveryFailingPosition is RELIABILITY F1: a 10-step saga failing at step k compensates
// steps k-1..1 in reverse order, each exactly once; steps without compensation are skipped.
func TestSagaEveryFailingPosition(t *testing.T) {
	var b strings.Builder
	b.WriteString(head + "compensate_on_failure: true\nsteps:\n")
	for i := 1; i <= 10; i++ {
		if i%4 == 0 {
			fmt.Fprintf(&b, "  - {id: s%d, activity: p.step, with: %d}\n", i, i) // no compensation
			continue
		}
		fmt.Fprintf(&b, "  - {id: s%d, activity: p.step, with: %d, compensate_with: {activity: p.undo, with: %d}}\n", i, i, i)
	}
	for k := 1; k <= 10; k++ {
		t.Run(fmt.Sprint("fail at ", k), func(t *testing.T) {
			s := newSim(t, b.String(), nil)
			var undone []int
			s.runActivities(func(act string, in any, _ int) (any, *history.Failure) {
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
			if got := len(compensationSteps(s.events, history.CompensationStarted)); got != len(want) {
				t.Fatalf("%d CompensationStarted, want %d", got, len(want))
			}
			s.replayOK(t)
		})
	}
}

func TestCompensationFailurePolicy(t *testing.T) {
	for _, cont := range []bool{false, true} {
		t.Run(fmt.Sprint("continue_on_error=", cont), func(t *testing.T) {
			src := strings.Replace(saga, "compensate_on_failure: true", fmt.Sprintf("compensate_on_failure: true\ncompensation: {continue_on_error: %v}", cont), 1)
			s := newSim(t, src, nil)
			s.runActivities(func(act string, in any, attempt int) (any, *history.Failure) {
				switch act {
				case "send_welcome_email", "cancel_subscription":
					return nil, &history.Failure{Message: act + " failed", NonRetryable: true}
				}
				return map[string]any{"id": "x"}, nil
			})
			c := s.closed(t)
			if c.ClosedReason != history.ClosedCompensationFailed {
				t.Fatalf("closed reason %q", c.ClosedReason)
			}
			deleted := len(compensationSteps(s.events, history.CompensationCompleted)) == 1
			if deleted != cont {
				t.Fatalf("delete_remote_user compensated = %v with continue_on_error %v", deleted, cont)
			}
			if !reflect.DeepEqual(c.Uncompensated[0], "steps[1]") || (!cont && len(c.Uncompensated) != 2) {
				t.Fatalf("uncompensated %v", c.Uncompensated)
			}
			s.replayOK(t)
		})
	}
}

func TestCancelCompensatesInFlightActivity(t *testing.T) {
	s := newSim(t, saga, nil)
	// create_remote_user is in flight (never answered) when the cancel comes.
	s.apply(history.Event{Type: history.CancelRequested, Data: history.MustData(history.CancelRequest{})})
	tail := types(s.events)
	if !reflect.DeepEqual(tail[3:6], []history.EventType{history.ActivityCancelled, history.CompensationStarted, history.ActivityScheduled}) {
		t.Fatalf("events %v", tail)
	}
	cs, _ := history.DataOf[history.Compensation](s.events[4])
	if !cs.Unknown {
		t.Fatal("compensation of an in-flight step not marked outcome_unknown")
	}
	s.runActivities(echo)
	if s.last().Type != history.WorkflowCancelled {
		t.Fatalf("closed %s", s.last().Type)
	}
	s.replayOK(t)
}

func TestExecutionTimeoutWhileWaitingOnTimer(t *testing.T) {
	s := newSim(t, head+"timeouts: {execution: 1h}\nsteps:\n  - delay: 2h\n", nil)
	s.fireTimers(t0.Add(3 * time.Hour))
	got := types(s.events)
	want := []history.EventType{history.WorkflowStarted, history.TimerScheduled, history.TimerScheduled,
		history.TimerFired, history.TimerCancelled, history.WorkflowTimedOut}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	c := s.closed(t)
	if c.TimeoutKind != ExecutionTimeout || c.Failure.Category != history.CategoryTimeout || c.Failure.PropagationKind != "timeout" {
		t.Fatalf("closed %+v", c)
	}
	if !s.now.Equal(t0.Add(time.Hour)) {
		t.Fatalf("timed out at %v, want the deadline", s.now)
	}
	s.replayOK(t)
}

func TestRunTimeoutCancelsTheActivity(t *testing.T) {
	s := newSim(t, head+"timeouts: {run: 30m}\nsteps:\n  - activity: p.slow\n", nil)
	s.fireTimers(t0.Add(time.Hour))
	got := types(s.events)
	if got[len(got)-2] != history.ActivityCancelled || s.last().Type != history.WorkflowTimedOut || s.closed(t).TimeoutKind != RunTimeout {
		t.Fatalf("events %v", got)
	}
	s.replayOK(t)
}

func TestCompletedRunDisarmsTimeouts(t *testing.T) {
	s := newSim(t, head+"timeouts: {run: 1h, execution: 2h}\nsteps:\n  - activity: p.x\n", nil)
	s.runActivities(echo)
	if len(s.timers) != 0 || s.last().Type != history.WorkflowCompleted {
		t.Fatalf("timers left %v, last %s", s.timers, s.last().Type)
	}
}
