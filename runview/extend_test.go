package runview_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"github.com/wendflow/wend/runview"
)

// folded is what a view says, its lazily worked out parts included.
type folded struct {
	Run            history.Run
	Events         []history.Event
	Workflow       runview.Workflow
	Activities     []runview.Activity
	Timers         []runview.Timer
	Signals        []runview.Signal
	Children       []runview.Child
	Compensations  []runview.Compensation
	Failures       []runview.Failure
	Metrics        runview.Metrics
	RetryOf        string
	Steps          []runview.Step
	Waits, Pending []runview.Wait
	PendingSignals []runview.Signal
	State          json.RawMessage
	StateErr       string
	Detail         runview.Detail
}

func foldedOf(v *runview.View) folded {
	return folded{v.Run, v.Events, v.Workflow, v.Activities, v.Timers, v.Signals, v.Children, v.Compensations, v.Failures,
		v.Metrics, v.RetryOf, v.Steps(), v.Waits(), v.Pending(), v.PendingSignals(), v.Live().State, v.Live().Err, v.Detail()}
}

// snapshot is a copy of what v says, as JSON: its slices are v's own, which a change to v
// changes too.
func snapshot(t *testing.T, v *runview.View) []byte {
	t.Helper()
	b, err := json.Marshal(foldedOf(v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// extendRuns are histories the interpreter writes: a loop, retries, a signal wait, a caught
// failure, a compensation, a failed run, a cancelled one.
var extendRuns = []struct {
	name string
	play func(t *testing.T) *sim.Sim
}{
	{"a loop, then a signal", func(t *testing.T) *sim.Sim {
		s := sim.New(t, loopSpec, nil)
		s.RunActivities(sim.Echo)
		s.Signal("approve", map[string]any{"ok": true})
		s.RunActivities(sim.Echo)
		return s
	}},
	{"tries that fail, then one that completes", func(t *testing.T) *sim.Sim {
		s := sim.New(t, sim.Head+"steps:\n  - {id: charge, activity: p.charge, retry: {tries: 4, backoff: [1s]}}\n  - {id: after, activity: p.after}\n", nil)
		s.RunActivities(func(name string, in any, try int) (any, *history.Failure) {
			if name == "charge" && try < 3 {
				return nil, &history.Failure{Category: history.CategoryActivity, Message: "busy"}
			}
			return in, nil
		})
		return s
	}},
	{"a caught failure, then a failed run", func(t *testing.T) *sim.Sim {
		s := sim.New(t, sim.Head+`
steps:
  - id: outer
    steps:
      - id: charge
        activity: p.charge
        catch: {id: refund, activity: p.refund}
  - id: after
    activity: p.after
`, nil)
		s.RunActivities(func(name string, in any, _ int) (any, *history.Failure) {
			if name == "charge" || name == "refund" {
				return nil, &history.Failure{Category: history.CategoryActivity, Message: name + " declined", NonRetryable: true}
			}
			return in, nil
		})
		return s
	}},
	{"a compensation", func(t *testing.T) *sim.Sim {
		s := sim.New(t, sim.Head+`
steps:
  - id: book
    activity: p.book
    compensate_with: {id: unbook, activity: p.unbook}
  - id: pay
    activity: p.pay
`, nil)
		s.RunActivities(func(name string, in any, _ int) (any, *history.Failure) {
			if name == "pay" {
				return nil, &history.Failure{Category: history.CategoryActivity, Message: "no funds", NonRetryable: true}
			}
			return in, nil
		})
		return s
	}},
	{"a timer, then a cancel", func(t *testing.T) *sim.Sim {
		s := sim.New(t, sim.Head+"steps:\n  - {id: first, activity: p.first}\n  - {id: nap, delay: 1h}\n  - {id: wait, wait_for_signal: go}\n", nil)
		s.RunActivities(sim.Echo)
		s.FireTimers(sim.T0.Add(2 * time.Hour))
		s.Cancel("enough")
		s.RunActivities(sim.Echo)
		return s
	}},
}

// Extending the view of a history's beginning with the rest is the view of the whole history,
// at every place the history may be cut; and the view extended is left as it was.
func TestExtendIsTheFoldOfTheWhole(t *testing.T) {
	for _, c := range extendRuns {
		t.Run(c.name, func(t *testing.T) {
			s := c.play(t)
			evs, rec := s.Events, s.Record()
			whole, err := runview.Fold(rec, evs)
			if err != nil {
				t.Fatal(err)
			}
			want := foldedOf(whole)
			for k := 1; k < len(evs); k++ {
				part := history.Run{WorkflowID: rec.WorkflowID, RunID: rec.RunID, Name: rec.Name, SpecFile: rec.SpecFile, LastSeq: evs[k-1].Seq}
				v, err := runview.Fold(part, evs[:k])
				if err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, v)
				// Extended in two steps, so an extended view is extended again.
				mid := k + (len(evs)-k)/2
				n, err := v.Extend(part, evs[k:mid])
				if err == nil {
					n, err = n.Extend(rec, evs[mid:])
				}
				if err != nil {
					t.Fatalf("extend at %d: %v", k, err)
				}
				if got := foldedOf(n); !reflect.DeepEqual(got, want) {
					t.Fatalf("extended at %d of %d, the view differs from the whole history's:\n got %+v\nwant %+v", k, len(evs), got, want)
				}
				if after := snapshot(t, v); !bytes.Equal(after, before) {
					t.Fatalf("extending at %d changed the view extended", k)
				}
			}
		})
	}
}

// Events that do not follow the view's are refused, as is a payload Fold refuses.
func TestExtendRefuses(t *testing.T) {
	s := sim.New(t, loopSpec, nil)
	s.RunActivities(sim.Echo)
	v, err := runview.Fold(s.Record(), s.Events[:3])
	if err != nil {
		t.Fatal(err)
	}
	bad := s.Events[3]
	bad.Data = json.RawMessage(`{"output": nope}`)
	for name, more := range map[string][]history.Event{
		"an event again":       {s.Events[2]},
		"out of order":         {s.Events[4], s.Events[3]},
		"data that is no JSON": {bad},
	} {
		if _, err := v.Extend(s.Record(), more); err == nil {
			t.Errorf("%s: extended", name)
		}
	}
}
