package runview

import (
	"fmt"
	"maps"
	"slices"

	"github.com/wendflow/wend/history"
)

// Extend is the view of the same run after more of its history: v with the events that
// follow its own (seq order, each after v's last) folded in, and the run's newer record. It
// equals Fold of the whole history, at the cost of the new events and of copying what they
// may change, so a page of a long open run need not fold it whole at every commit.
//
// v is left as it was, and may be read meanwhile: the new view shares with it only what
// neither changes (its events' array up to v's last, the spec, each activity's tries until
// an event changes them). Extend fails where Fold would, and on events that do not follow v's.
func (v *View) Extend(run history.Run, more []history.Event) (*View, error) {
	last := v.Events[len(v.Events)-1].Seq
	for _, ev := range more {
		if ev.Seq <= last {
			return nil, fmt.Errorf("event %d does not follow event %d", ev.Seq, last)
		}
		last = ev.Seq
	}
	n := &View{
		Run:           run,
		Events:        append(v.Events[:len(v.Events):len(v.Events)], more...),
		Workflow:      v.Workflow,
		Activities:    slices.Clone(v.Activities),
		Timers:        slices.Clone(v.Timers),
		Signals:       slices.Clone(v.Signals),
		Children:      slices.Clone(v.Children),
		Compensations: slices.Clone(v.Compensations),
		Failures:      slices.Clone(v.Failures),
		RetryOf:       v.RetryOf,

		started:        v.started,
		acts:           maps.Clone(v.acts),
		timers:         maps.Clone(v.timers),
		signals:        maps.Clone(v.signals),
		children:       maps.Clone(v.children),
		comps:          maps.Clone(v.comps),
		steps:          v.steps.clone(),
		rawFailures:    slices.Clone(v.rawFailures),
		output:         v.output,
		sharedAttempts: len(v.Activities),
		ownedAttempts:  map[int]bool{},
		spec:           v.spec,
		specLoaded:     v.specLoaded,
		specs:          v.specs,
		ids:            v.ids,
	}
	n.Workflow.Uncompensated = slices.Clone(v.Workflow.Uncompensated)
	if err := n.fold(more); err != nil {
		return nil, err
	}
	if err := n.finish(run); err != nil {
		return nil, err
	}
	return n, nil
}

// ownAttempts gives Activities[i] tries of its own before an event changes them (Extend).
func (v *View) ownAttempts(i int) {
	if i >= v.sharedAttempts || v.ownedAttempts[i] {
		return
	}
	v.Activities[i].Attempts = slices.Clone(v.Activities[i].Attempts)
	v.ownedAttempts[i] = true
}

// clone copies the step instances, each one's state too.
func (se stepEvents) clone() stepEvents {
	out := make(stepEvents, len(se))
	for static, m := range se {
		c := make(map[string]*stepState, len(m))
		for path, s := range m {
			st := *s
			c[path] = &st
		}
		out[static] = c
	}
	return out
}
