package interpreter_test

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// TestSignalWaitTimes: under RulesSignalWaitTimes a wait's timeout timer names the signal and
// SignalApplied records when the wait began (the signal's arrival time when it came first);
// a run recorded under older rules decides exactly what it did, without them.
func TestSignalWaitTimes(t *testing.T) {
	const src = "wend: v1\nname: t\nplugins: {p: ./p}\nsteps:\n" +
		"  - {wait_for_signal: go, timeout: 1h}\n" +
		"  - {wait_for_signal: early}\n"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, rules := range []int{history.RulesShardHint, history.RulesSignalWaitTimes} {
		w, ds := (&spec.Loader{}).Load("t.wend.yaml", []byte(src))
		if ds.HasErrors() {
			t.Fatal(ds.Error())
		}
		st := history.Started{WorkflowID: "w", RunID: "r", SpecFile: "t.wend.yaml", SpecSource: src, Rules: rules}
		r := interpreter.New(w, st)
		seq := uint64(0)
		apply := func(typ history.EventType, at time.Time, data any) []history.Event {
			t.Helper()
			seq++
			out, err := r.Apply(history.Event{Seq: seq, Type: typ, Time: at, Data: history.MustData(data)})
			if err != nil {
				t.Fatal(err)
			}
			seq += uint64(len(out))
			return out
		}
		first := apply(history.WorkflowStarted, t0, st)
		ts, _ := history.DataOf[history.TimerSchedule](only(t, first, history.TimerScheduled))
		apply(history.SignalReceived, t0.Add(time.Minute), history.Signal{Name: "early"})
		out := apply(history.SignalReceived, t0.Add(2*time.Minute), history.Signal{Name: "go"})
		goApplied, _ := history.DataOf[history.Signal](only(t, out, history.SignalApplied))
		var earlyApplied history.Signal
		for _, ev := range out {
			if ev.Type == history.SignalApplied && ev.Step == "steps[1]" {
				earlyApplied, _ = history.DataOf[history.Signal](ev)
			}
		}
		var wantSignal string
		var wantGo, wantEarly time.Time
		if rules >= history.RulesSignalWaitTimes {
			wantSignal, wantGo, wantEarly = "go", t0, t0.Add(2*time.Minute)
		}
		if ts.Signal != wantSignal {
			t.Errorf("rules %d: timeout names signal %q, want %q", rules, ts.Signal, wantSignal)
		}
		if !goApplied.WaitedSince.Equal(wantGo) || !earlyApplied.WaitedSince.Equal(wantEarly) {
			t.Errorf("rules %d: waited since %v and %v, want %v and %v", rules, goApplied.WaitedSince, earlyApplied.WaitedSince, wantGo, wantEarly)
		}
	}
}

// only is the first event of type typ in evs, failing when there is none.
func only(t *testing.T, evs []history.Event, typ history.EventType) history.Event {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == typ {
			return ev
		}
	}
	t.Fatalf("no %s in %v", typ, evs)
	return history.Event{}
}
