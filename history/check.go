package history

import (
	"fmt"
	"time"
)

// Problem is one integrity violation found by Check.
type Problem struct {
	RunID string
	Seq   uint64 // 0 when it concerns the whole history
	What  string
}

func (p Problem) String() string {
	if p.Seq == 0 {
		return fmt.Sprintf("run %s: %s", p.RunID, p.What)
	}
	return fmt.Sprintf("run %s: event %d: %s", p.RunID, p.Seq, p.What)
}

// Check verifies a run's history (docs/reliability.md I1): seq contiguous from 1, exactly one
// WorkflowStarted and it comes first, at most one terminal event and nothing after it, the
// run record agreeing with the events. Checksums are verified when events are decoded.
func Check(r Run, events []Event) []Problem {
	var ps []Problem
	add := func(seq uint64, format string, args ...any) {
		ps = append(ps, Problem{r.RunID, seq, fmt.Sprintf(format, args...)})
	}
	if len(events) == 0 && r.NeverStarted() {
		return nil // a queued run's history begins when it starts
	}
	if len(events) == 0 {
		add(0, "no events")
		return ps
	}
	terminal := uint64(0)
	for i, e := range events {
		if want := uint64(i + 1); e.Seq != want {
			add(e.Seq, "seq %d where %d was expected", e.Seq, want)
		}
		if (i == 0) != (e.Type == WorkflowStarted) {
			add(e.Seq, "WorkflowStarted must be the first event and only the first (found %s)", e.Type)
		}
		if terminal != 0 {
			add(e.Seq, "%s after the terminal event %d", e.Type, terminal)
		}
		if e.Type.Terminal() && terminal == 0 {
			terminal = e.Seq
		}
	}
	checkMigrations(events, add)
	if last := events[len(events)-1].Seq; r.LastSeq != last {
		add(0, "run record says last seq %d, history ends at %d", r.LastSeq, last)
	}
	if (terminal == 0) != r.Open() {
		add(0, "run status %q does not agree with the history (terminal event: %v)", r.Status, terminal != 0)
	}
	return ps
}

// CheckRecord verifies a run record against its history: the ids, spec and
// parent its WorkflowStarted payload names, the start time (but for a retry run, whose first
// event keeps the failed run's time), and the status, closed reason and close time its terminal
// event implies. Check covers the status of an open run and the last seq.
func CheckRecord(r Run, events []Event) []Problem {
	var ps []Problem
	add := func(format string, args ...any) {
		ps = append(ps, Problem{r.RunID, 0, "run record: " + fmt.Sprintf(format, args...)})
	}
	if len(events) == 0 || events[0].Type != WorkflowStarted {
		return nil // Check reports it
	}
	st, err := DataOf[Started](events[0])
	if err == nil {
		st, err = CurrentSpec(st, events) // a moved run's record names the text it is on
	}
	if err != nil {
		add("%v", err)
		return ps
	}
	for _, f := range []struct{ name, rec, hist string }{
		{"workflow_id", r.WorkflowID, st.WorkflowID},
		{"run_id", r.RunID, st.RunID},
		{"spec_file", r.SpecFile, st.SpecFile},
		{"spec_sha256", r.SpecSHA256, st.SpecSHA256},
		{"parent_run_id", r.ParentRunID, st.ParentRunID},
		{"parent_step", r.ParentStep, st.ParentStep},
	} {
		if f.rec != f.hist {
			add("%s is %q, WorkflowStarted says %q", f.name, f.rec, f.hist)
		}
	}
	if st.RetryOf == "" && !r.StartedAt.Equal(events[0].Time) {
		add("started_at is %s, WorkflowStarted was at %s", r.StartedAt.Format(time.RFC3339Nano), events[0].Time.Format(time.RFC3339Nano))
	}
	last := events[len(events)-1]
	switch {
	case last.Type.Terminal():
		status, reason := ClosedBy(last)
		if r.Status != status || r.ClosedReason != reason {
			add("status %s (%s), its terminal %s says %s (%s)", r.Status, r.ClosedReason, last.Type, status, reason)
		}
		if !r.ClosedAt.Equal(last.Time) {
			add("closed_at is %s, %s was at %s", r.ClosedAt.Format(time.RFC3339Nano), last.Type, last.Time.Format(time.RFC3339Nano))
		}
	case r.ClosedReason != "" || !r.ClosedAt.IsZero():
		add("closed (%s at %s), but its history has no terminal event", r.ClosedReason, r.ClosedAt.Format(time.RFC3339Nano))
	}
	return ps
}
