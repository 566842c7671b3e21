// Package parity reduces a run's export (wend.history-export/v1) to what must agree between
// wend's local engine and wend on Temporal — status, closed reason, output, each activity's
// tries, failures, compensations, signals — and lists the differences between two such
// reductions. Times, sequence numbers, run and attempt ids are left out: they differ between
// engines by design (Temporal stamps workflow-task times; ids carry run ids).
//
// A try that times out is compared by its category only. Both engines race two clocks for
// it, the plugin's own deadline (type Timeout, propagation activity, "timed out after N ms")
// and the engine's timer (type timeout, propagation timeout, "attempt N exceeded its
// timeout"), and either may win on either engine: the local engine alone gives both within
// one run of examples/failures/step-timeout.wend.yaml.
package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wendflow/wend/history/export"
)

// Run is the comparable part of one run.
type Run struct {
	Status        string         `json:"status"`
	ClosedReason  string         `json:"closed_reason,omitempty"`
	Output        string         `json:"output,omitempty"`
	Failure       *Failure       `json:"failure,omitempty"`
	Activities    []Activity     `json:"activities"`
	Failures      []Failure      `json:"failures"`
	Compensations []Compensation `json:"compensations"`
	Signals       []Signal       `json:"signals"`
	Children      []Child        `json:"children"`
}

// Activity is one activity execution: where, what, how it ended and each try's outcome.
type Activity struct {
	Step     string   `json:"step"`
	Call     string   `json:"call"` // plugin.activity
	Input    string   `json:"input"`
	Status   string   `json:"status"`
	Output   string   `json:"output,omitempty"`
	Attempts []string `json:"attempts"` // per try: outcome, and error type/category when failed
}

// Failure is a failure record without its time, seq and ids.
type Failure struct {
	EventType       string `json:"event_type"`
	Category        string `json:"category"`
	PropagationKind string `json:"propagation_kind"`
	NonRetryable    bool   `json:"non_retryable"`
	Type            string `json:"type,omitempty"`
	Message         string `json:"message"`
	Step            string `json:"step,omitempty"`
	Attempt         int    `json:"attempt,omitempty"`
}

// Compensation is one compensated step.
type Compensation struct {
	Step           string `json:"step"`
	Reason         string `json:"reason"`
	OutcomeUnknown bool   `json:"outcome_unknown"`
	Status         string `json:"status"`
}

// Signal is one received signal and where it went.
type Signal struct {
	Name          string `json:"name"`
	SignalID      string `json:"signal_id,omitempty"`
	Data          string `json:"data,omitempty"`
	Pending       bool   `json:"pending"`
	AppliedToStep string `json:"applied_to_step,omitempty"`
}

// Child is one run_workflow or wait_for_workflow.
type Child struct {
	Kind   string `json:"kind"`
	Step   string `json:"step"`
	Status string `json:"status"`
	Output string `json:"output,omitempty"`
}

// Timing names the JSON keys whose numbers measure elapsed time (the example plugin's
// sleep reports slept_ms): they are replaced by "<ms>" wherever they appear.
var Timing = []string{"slept_ms", "took_ms"}

// Of reduces an export. Activities are ordered by step path, then input, so that the
// completion order of concurrent branches (which engines may differ on) does not matter.
func Of(d export.Document) Run {
	r := Run{
		Status:        d.Workflow.Status,
		ClosedReason:  d.Workflow.ClosedReason,
		Output:        canon(d.Workflow.Output),
		Failure:       failure(d.Workflow.Failure),
		Activities:    []Activity{},
		Failures:      []Failure{},
		Compensations: []Compensation{},
		Signals:       []Signal{},
		Children:      []Child{},
	}
	for _, a := range d.Activities {
		na := Activity{Step: a.Step, Call: a.Plugin + "." + a.Activity, Input: canon(a.Input), Status: a.Status, Output: canon(a.Output)}
		for _, at := range a.Attempts {
			s := at.Outcome
			switch {
			case at.Error != nil && at.Error.FailureCategory == timeoutCategory:
				s += " " + timeoutCategory
			case at.Error != nil:
				s += fmt.Sprintf(" %s/%s", at.Error.Type, at.Error.FailureCategory)
			}
			na.Attempts = append(na.Attempts, s)
		}
		r.Activities = append(r.Activities, na)
	}
	slices.SortStableFunc(r.Activities, func(a, b Activity) int {
		if c := strings.Compare(a.Step, b.Step); c != 0 {
			return c
		}
		return strings.Compare(a.Input, b.Input)
	})
	for _, f := range d.Failures {
		r.Failures = append(r.Failures, *failure(&f))
	}
	for _, c := range d.Compensations {
		r.Compensations = append(r.Compensations, Compensation{Step: c.Step, Reason: c.Reason, OutcomeUnknown: c.OutcomeUnknown, Status: c.Status})
	}
	for _, s := range d.Signals {
		r.Signals = append(r.Signals, Signal{Name: s.Name, SignalID: s.SignalID, Data: canon(s.Data), Pending: s.Pending, AppliedToStep: s.AppliedToStep})
	}
	for _, c := range d.Children {
		r.Children = append(r.Children, Child{Kind: c.Kind, Step: c.Step, Status: c.Status, Output: canon(c.Output)})
	}
	slices.SortStableFunc(r.Children, func(a, b Child) int { return strings.Compare(a.Step, b.Step) })
	return r
}

func failure(f *export.Failure) *Failure {
	if f == nil {
		return nil
	}
	n := &Failure{EventType: f.EventType, Category: f.FailureCategory, PropagationKind: f.PropagationKind,
		NonRetryable: f.NonRetryable, Type: f.Type, Message: f.Message, Step: f.Step, Attempt: f.Attempt}
	if f.FailureCategory == timeoutCategory {
		n.PropagationKind, n.Type, n.Message = "", "", "" // which clock fired first: see the package doc
	}
	return n
}

const timeoutCategory = "timeout"

// Diff lists where got differs from want, one line per differing field, as JSON paths.
// Empty means they agree.
func Diff(want, got Run) []string {
	var a, b any
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	_ = json.Unmarshal(wb, &a)
	_ = json.Unmarshal(gb, &b)
	var out []string
	diff("", a, b, &out)
	return out
}

func diff(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			diff(path+"."+k, av[k], bv[k], out)
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		for i := range max(len(av), len(bv)) {
			var x, y any = "<missing>", "<missing>"
			if i < len(av) {
				x = av[i]
			}
			if i < len(bv) {
				y = bv[i]
			}
			diff(fmt.Sprintf("%s[%d]", path, i), x, y, out)
		}
		return
	}
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	if !bytes.Equal(ab, bb) {
		*out = append(*out, fmt.Sprintf("%s: local %s, temporal %s", path, ab, bb))
	}
}

// canon re-encodes JSON with sorted keys and timing numbers masked; "" for none.
func canon(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid JSON: " + string(raw)
	}
	b, _ := json.Marshal(mask(v))
	return string(b)
}

func mask(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if slices.Contains(Timing, k) {
				if _, isNum := e.(float64); isNum {
					x[k] = "<ms>"
					continue
				}
			}
			x[k] = mask(e)
		}
	case []any:
		for i, e := range x {
			x[i] = mask(e)
		}
	}
	return v
}
