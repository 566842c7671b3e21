package history

import "fmt"

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

// Check verifies a run's history (RELIABILITY.md I1): seq contiguous from 1, exactly one
// WorkflowStarted and it comes first, at most one terminal event and nothing after it, the
// run record agreeing with the events. Checksums are verified when events are decoded.
func Check(r Run, events []Event) []Problem {
	var ps []Problem
	add := func(seq uint64, format string, args ...any) {
		ps = append(ps, Problem{r.RunID, seq, fmt.Sprintf(format, args...)})
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
	if last := events[len(events)-1].Seq; r.LastSeq != last {
		add(0, "run record says last seq %d, history ends at %d", r.LastSeq, last)
	}
	if (terminal == 0) != r.Open() {
		add(0, "run status %q does not agree with the history (terminal event: %v)", r.Status, terminal != 0)
	}
	return ps
}
