package runview

import (
	"github.com/wendflow/wend/history"
)

// timer folds timer events. A timer id can be scheduled again after it closed (a step that
// runs again), so fired/cancelled apply to the id's latest scheduling, and only while open.
func (v *View) timer(ev history.Event) error {
	if ev.Type == history.TimerScheduled {
		ts, err := history.DataOf[history.TimerSchedule](ev)
		if err != nil {
			return err
		}
		v.timers[ts.TimerID] = len(v.Timers)
		v.Timers = append(v.Timers, Timer{TimerID: ts.TimerID, Step: ev.Step, Purpose: ts.Purpose,
			FireAt: ts.FireAt, Status: TimerScheduled, ScheduledSeq: ev.Seq, ScheduledAt: ev.Time})
		return nil
	}
	ref, err := history.DataOf[history.TimerRef](ev)
	if err != nil {
		return err
	}
	i, ok := v.timers[ref.TimerID]
	if !ok || v.Timers[i].Status != TimerScheduled {
		return nil // a late firing of a cancelled timer: the interpreter ignores it too
	}
	t := &v.Timers[i]
	t.Status, t.ClosedSeq, t.ClosedAt = TimerFired, ev.Seq, ev.Time
	if ev.Type == history.TimerCancelled {
		t.Status = TimerCancelled
	}
	return nil
}

// signal folds signal events: SignalApplied names the SignalReceived it consumed.
func (v *View) signal(ev history.Event) error {
	s, err := history.DataOf[history.Signal](ev)
	if err != nil {
		return err
	}
	if ev.Type == history.SignalReceived {
		v.signals[ev.Seq] = len(v.Signals)
		v.Signals = append(v.Signals, Signal{Name: s.Name, SignalID: s.SignalID, Data: s.Data,
			ReceivedSeq: ev.Seq, ReceivedAt: ev.Time, Pending: true})
		return nil
	}
	i, ok := v.signals[s.ReceivedSeq]
	if !ok {
		return nil
	}
	sig := &v.Signals[i]
	sig.Pending, sig.AppliedSeq, sig.AppliedAt, sig.AppliedToStep = false, ev.Seq, ev.Time, ev.Step
	return nil
}
