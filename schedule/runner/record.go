package runner

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wendflow/wend/schedule"
	"github.com/wendflow/wend/spec"
)

// Record is what the store keeps of one schedule: its definition as last declared (so the
// CLI can list schedules with no serve running) and its state.
type Record struct {
	ID            string          `json:"id"`
	Workflow      string          `json:"workflow"`
	File          string          `json:"file"`
	Cron          string          `json:"cron,omitempty"`
	Every         string          `json:"every,omitempty"`
	Timezone      string          `json:"timezone,omitempty"`
	Jitter        string          `json:"jitter,omitempty"`
	Overlap       string          `json:"overlap"`
	CatchupWindow string          `json:"catchup_window,omitempty"`
	Paused        bool            `json:"paused_declared,omitempty"`
	Input         json.RawMessage `json:"input,omitempty"`
	State         schedule.State  `json:"state"`
}

// recordOf is the record of a declared schedule with the given state.
func recordOf(e Entry, st schedule.State) Record {
	s := e.Schedule
	r := Record{ID: s.ID, Workflow: e.Workflow, File: e.File, Cron: s.Cron, Timezone: s.Timezone,
		Overlap: string(s.Overlap), Paused: s.Paused, Input: s.Input, State: st}
	if s.Every.IsSet() {
		r.Every = s.Every.D.String()
	}
	if s.Jitter.IsSet() {
		r.Jitter = s.Jitter.D.String()
	}
	if s.CatchupWindow.IsSet() {
		r.CatchupWindow = s.CatchupWindow.D.String()
	}
	return r
}

// def compiles a stored record back to a definition.
func (r Record) def() (schedule.Def, error) {
	var every, jitter, catchup time.Duration
	var err error
	for _, f := range []struct {
		s string
		d *time.Duration
	}{{r.Every, &every}, {r.Jitter, &jitter}, {r.CatchupWindow, &catchup}} {
		if f.s != "" {
			if *f.d, err = time.ParseDuration(f.s); err != nil {
				return schedule.Def{}, fmt.Errorf("schedule %s: stored duration %q: %w", r.ID, f.s, err)
			}
		}
	}
	tm, err := schedule.NewTiming(r.Cron, every, r.Timezone)
	if err != nil {
		return schedule.Def{}, fmt.Errorf("schedule %s: %w", r.ID, err)
	}
	o, err := schedule.ParseOverlap(r.Overlap)
	if err != nil {
		return schedule.Def{}, fmt.Errorf("schedule %s: %w", r.ID, err)
	}
	return schedule.Def{ID: r.ID, Timing: tm, Jitter: jitter, Overlap: o, CatchupWindow: catchup, Paused: r.Paused}, nil
}

// Entry is a schedule declared in a workflow file that serve registered.
type Entry struct {
	Workflow string // the workflow's name
	File     string
	Source   []byte // the file's text as read at start: every fire's run records it
	Schedule *spec.Schedule
}
