package interpreter_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/interpreter/sim"
)

// TestPlanRetry: the plan keeps the history before the failed try's input, names the failed
// activity, and derives the new run's payload; compensated runs and runs that failed other
// than in an activity are refused with the sentinel errors both engines word.
func TestPlanRetry(t *testing.T) {
	const two = sim.Head + `
steps:
  - activity: p.a
  - activity: p.b
`
	failB := func(act string, in any, _ int) (any, *history.Failure) {
		if act == "b" {
			return nil, &history.Failure{Type: "Boom", Message: "b failed", NonRetryable: true}
		}
		return in, nil
	}
	t.Run("failed activity", func(t *testing.T) {
		s := sim.New(t, two, nil)
		s.RunActivities(failB)
		old := s.Record()
		plan, err := interpreter.PlanRetry(old.RunID, s.Events)
		if err != nil {
			t.Fatal(err)
		}
		var failedExec string
		for _, ev := range s.Events {
			if ev.Type == history.ActivityScheduled && ev.Step == "steps[1]" {
				failedExec = ev.ActivityExecutionID
			}
		}
		if plan.ActivityExecID == "" || plan.ActivityExecID != failedExec {
			t.Fatalf("exec id %q, want %q", plan.ActivityExecID, failedExec)
		}
		last := plan.Prefix[len(plan.Prefix)-1]
		if last.Type != history.ActivityScheduled || last.Step != "steps[1]" {
			t.Fatalf("prefix ends with %s at %s, want the failed step's ActivityScheduled", last.Type, last.Step)
		}
		for i, ev := range plan.Prefix {
			if ev.Seq != uint64(i+1) || !reflect.DeepEqual(ev, s.Events[i]) {
				t.Fatalf("prefix event %d is not the failed run's", i)
			}
		}
		first, _ := history.DataOf[history.Started](s.Events[0])
		st := plan.Started
		if st.RetryOf != old.RunID || st.RunID != "" || st.ExecBase != first.RunID || !st.RunStarted.Equal(s.Events[0].Time) {
			t.Fatalf("started %+v", st)
		}
		plan.Prefix[0].Type = "x"
		if s.Events[0].Type != history.WorkflowStarted {
			t.Fatal("the prefix shares the failed run's slice")
		}
	})
	t.Run("compensated", func(t *testing.T) {
		s := sim.New(t, saga, nil)
		s.RunActivities(sagaAnswers("send_welcome_email"))
		if _, err := interpreter.PlanRetry("r", s.Events); !errors.Is(err, interpreter.ErrRetryCompensated) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("not an activity", func(t *testing.T) {
		s := sim.New(t, sim.Head+"steps:\n  - fail: {message: no}\n", nil)
		s.RunActivities(sim.Echo)
		if s.Last().Type != history.WorkflowFailed {
			t.Fatalf("last %s", s.Last().Type)
		}
		if _, err := interpreter.PlanRetry("r", s.Events); !errors.Is(err, interpreter.ErrRetryNoActivity) {
			t.Fatalf("err = %v", err)
		}
	})
}
