package runview_test

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/runview"
)

const loopSpec = sim.Head + `
steps:
  - id: each
    for_each: [1, 2]
    steps:
      - id: hello
        activity: p.echo
        with: {n: "${{ item }}"}
  - id: approve
    wait_for_signal: approve
  - id: never
    activity: p.echo
`

func view(t *testing.T, s *sim.Sim) *runview.View {
	t.Helper()
	v, err := runview.Fold(s.Record(), s.Events)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func rows(v *runview.View) map[string]runview.Step {
	got := map[string]runview.Step{}
	for _, r := range v.Steps() {
		got[r.Path] = r
	}
	return got
}

// TestStepTree: a for_each's instances fold into its body step, a composite takes its
// children's status, a signal wait with no event yet shows as waiting, an unreached step as
// none; a failed step is failed with its message.
func TestStepTree(t *testing.T) {
	s := sim.New(t, loopSpec, nil)
	s.RunActivities(sim.Echo)
	got := rows(view(t, s))
	for path, want := range map[string]struct {
		status    string
		depth     int
		instances int
		name      string
	}{
		"steps[0]":          {runview.StepCompleted, 0, 0, "each"},
		"steps[0].steps[0]": {runview.StepCompleted, 1, 2, "hello"},
		"steps[1]":          {runview.StepWaiting, 0, 0, "approve"},
		"steps[2]":          {runview.StepNone, 0, 0, "never"},
	} {
		r, ok := got[path]
		if !ok {
			t.Errorf("no row %s in %v", path, got)
			continue
		}
		if r.Status != want.status || r.Depth != want.depth || r.Instances != want.instances || r.Name != want.name {
			t.Errorf("%s: status %s depth %d instances %d name %q, want %+v", path, r.Status, r.Depth, r.Instances, r.Name, want)
		}
	}
	if r := got["steps[1]"]; !r.End.IsZero() {
		t.Errorf("a waiting step has an end: %v", r.End)
	}

	f := sim.New(t, sim.Head+"steps:\n  - {id: charge, activity: p.charge}\n", nil)
	f.RunActivities(func(string, any, int) (any, *history.Failure) {
		return nil, &history.Failure{Category: history.CategoryActivity, Message: "card declined", NonRetryable: true}
	})
	steps := view(t, f).Steps()
	if len(steps) != 1 || steps[0].Status != runview.StepFailed || steps[0].Error != "card declined" || steps[0].End.IsZero() {
		t.Errorf("failed step: %+v", steps)
	}
}

// TestStepTreeNeedsTheSpec: a history whose recorded spec no longer loads has no tree, but
// the rest of its view.
func TestStepTreeNeedsTheSpec(t *testing.T) {
	s := sim.New(t, loopSpec, nil)
	evs := append([]history.Event(nil), s.Events...)
	evs[0].Data = history.MustData(history.Started{WorkflowID: "wf", RunID: "run1", SpecFile: "x.wend.yaml", SpecSource: "not: [a spec"})
	v, err := runview.Fold(s.Record(), evs)
	if err != nil {
		t.Fatal(err)
	}
	if v.Steps() != nil || len(v.Activities) != 1 || v.Live().Err == "" {
		t.Errorf("steps %v, activities %d, live %+v", v.Steps(), len(v.Activities), v.Live())
	}
	if _, err := runview.Fold(s.Record(), evs[1:]); err == nil {
		t.Error("a history without WorkflowStarted first must not fold")
	}
}

// TestStepTreeOnASuccessfulRun: on a run that completed, a wait whose timeout its catch handled
// is caught, not failed (its note keeps the timeout), its parent reads completed; a step that
// completed on its third try has no note, though its first two failed.
func TestStepTreeOnASuccessfulRun(t *testing.T) {
	s := sim.New(t, sim.Head+`
steps:
  - id: outer
    steps:
      - id: paid
        wait_for_signal: paid
        timeout: 1h
        catch:
          - steps:
              - {id: remind, activity: p.remind}
  - id: charge
    activity: p.charge
    retry: {tries: 5, backoff: [1s]}
`, nil)
	s.FireTimers(sim.T0.Add(2 * time.Hour))
	s.RunActivities(func(name string, in any, attempt int) (any, *history.Failure) {
		if name == "charge" && attempt < 3 {
			return nil, &history.Failure{Category: history.CategoryActivity, Type: "Down", Message: "gateway down"}
		}
		return in, nil
	})
	if s.Last().Type != history.WorkflowCompleted {
		t.Fatalf("the run did not complete: %s", s.Last().Type)
	}
	got := rows(view(t, s))
	for path, want := range map[string]struct{ status, note string }{
		"steps[0]":                            {runview.StepCompleted, ""},
		"steps[0].steps[0]":                   {runview.StepCaught, "wait_for_signal step timed out after 1h0m0s"},
		"steps[0].steps[0].catch[0].steps[0]": {runview.StepCompleted, ""},
		"steps[1]":                            {runview.StepCompleted, ""},
	} {
		r := got[path]
		if r.Status != want.status || r.Error != want.note {
			t.Errorf("%s: status %q note %q, want %q %q", path, r.Status, r.Error, want.status, want.note)
		}
	}
}

// TestCaughtSteps: a failed step whose catch handles it is caught, whatever its catch records:
// a state-only catch (`steps: []` with a `set`) writes no event yet ran, so its row reads
// completed and the parent too; a catch that itself fails leaves the step caught and the
// parent failed.
func TestCaughtSteps(t *testing.T) {
	for _, tc := range []struct {
		name, catch string
		want        map[string]string
	}{
		{"state-only catch", `{steps: [], set: {declined: true}}`, map[string]string{
			"steps[0]": runview.StepCompleted, "steps[0].steps[0]": runview.StepCaught,
			"steps[0].steps[0].catch": runview.StepCompleted, "steps[1]": runview.StepCompleted}},
		{"catch list, a set then an activity", `[{steps: [], set: {declined: true}}, {id: note, activity: p.note}]`, map[string]string{
			"steps[0]": runview.StepCompleted, "steps[0].steps[0]": runview.StepCaught,
			"steps[0].steps[0].catch[0]": runview.StepCompleted, "steps[0].steps[0].catch[1]": runview.StepCompleted}},
		{"a catch that fails", `{id: refund, activity: p.refund}`, map[string]string{
			"steps[0]": runview.StepFailed, "steps[0].steps[0]": runview.StepCaught,
			"steps[0].steps[0].catch": runview.StepFailed, "steps[1]": runview.StepNone}},
		{"no catch", ``, map[string]string{"steps[0]": runview.StepFailed, "steps[0].steps[0]": runview.StepFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			catch := ""
			if tc.catch != "" {
				catch = "\n        catch: " + tc.catch
			}
			s := sim.New(t, sim.Head+`
steps:
  - id: outer
    steps:
      - id: charge
        activity: p.charge`+catch+`
  - id: after
    activity: p.after
`, nil)
			s.RunActivities(func(name string, in any, _ int) (any, *history.Failure) {
				if name == "charge" || name == "refund" {
					return nil, &history.Failure{Category: history.CategoryActivity, Message: name + " declined", NonRetryable: true}
				}
				return in, nil
			})
			got := rows(view(t, s))
			for path, want := range tc.want {
				if r := got[path]; r.Status != want {
					t.Errorf("%s: status %q, want %q", path, r.Status, want)
				}
			}
			if r := got["steps[0].steps[0]"]; r.Error != "charge declined" {
				t.Errorf("the caught step's note %q, want its failure", r.Error)
			}
		})
	}
}

// TestDetailNamesPropagation: a plugin's error recorded without a propagation kind reads
// "activity" in the detail (wend show --json, the API), never "".
func TestDetailNamesPropagation(t *testing.T) {
	f := sim.New(t, sim.Head+"steps:\n  - {id: charge, activity: p.charge}\n", nil)
	f.RunActivities(func(string, any, int) (any, *history.Failure) {
		return nil, &history.Failure{Category: history.CategoryActivity, Message: "card declined", NonRetryable: true}
	})
	d := view(t, f).Detail()
	if len(d.Failures) == 0 || d.Failure == nil {
		t.Fatalf("no failures: %+v", d)
	}
	for _, fa := range d.Failures {
		if fa.Failure.PropagationKind == "" {
			t.Errorf("failure at seq %d (%s) has no propagation kind", fa.Seq, fa.Type)
		}
	}
	if d.Failure.PropagationKind == "" {
		t.Errorf("the run's failure has no propagation kind: %+v", d.Failure)
	}
}
