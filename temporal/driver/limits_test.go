package driver

import (
	"strings"
	"sync"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/sim"
	"go.temporal.io/sdk/workflow"
)

// lockedBuffer collects log lines written from the workflow and activity goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// setVar sets a package variable for one test.
func setVar[T any](t *testing.T, v *T, to T) {
	old := *v
	*v = to
	t.Cleanup(func() { *v = old })
}

// TestTemporalHistoryLimit: Temporal's own history count (faked here at 6 Temporal events per
// activity, as the test environment counts none) fails the run with structural_limit at
// FailAt of the limit, after a warning at WarnAt, and the failure is in the wend history so
// replay agrees.
func TestTemporalHistoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		usage  func(tries int) (int, int)
		reason string
	}{
		{"events", func(n int) (int, int) { return 6 * n, 0 }, "reached 96 events, 95% of Temporal's limit of 100"},
		{"bytes", func(n int) (int, int) { return 0, 6000 * n }, "reached 96000 bytes, 95% of Temporal's limit of 100000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setVar(t, &TemporalMaxHistoryEvents, 100)
			setVar(t, &TemporalMaxHistoryBytes, 100_000)
			var logs lockedBuffer
			e, p := newEnvLogging(t, &logs)
			setVar(t, &historyUsage, func(workflow.Context) (int, int) {
				p.mu.Lock()
				defer p.mu.Unlock()
				return tc.usage(len(p.tries))
			})
			src := sim.Head + "steps:\n  - for_each: \"${{ input.items }}\"\n    steps:\n      - activity: p.echo\n        with: \"${{ item }}\"\n"
			items := make([]int, 50)
			evs := run(t, e, startInput(src, map[string]any{"items": items}, nil))
			c := wendFailure(t, e, history.WorkflowFailed)
			if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, tc.reason) {
				t.Fatalf("failure %+v", c.Failure)
			}
			if n := len(ofType(evs, history.StructuralLimitReached)); n != 1 {
				t.Fatalf("%d StructuralLimitReached recorded", n)
			}
			if n := len(p.triesOf("echo")); n != 16 {
				t.Fatalf("%d activities ran, want 16 (the run stops at 96 of 100)", n)
			}
			if !strings.Contains(logs.String(), "near a structural limit") {
				t.Fatalf("no warning logged before the limit; logs:\n%s", logs.String())
			}
		})
	}
}

// TestPayloadOverTemporalBlobLimit: an activity input wend accepts (under 2 MiB) but whose
// call would pass Temporal's blob limit fails the step for good with a wend failure, before
// Temporal sees it; the plugin is never called and no retry happens.
func TestPayloadOverTemporalBlobLimit(t *testing.T) {
	src := sim.Head + `steps:
  - activity: p.echo
    with: ["${{ input.s }}", "${{ input.s }}", "${{ input.s }}"]
    retry: {tries: 3, backoff: [1s]}
`
	e, p := newEnv(t)
	evs := run(t, e, startInput(src, map[string]any{"s": strings.Repeat("x", 694_000)}, nil))
	c := wendFailure(t, e, history.WorkflowFailed)
	if c.Failure.Category != history.CategoryStructuralLimit || c.Failure.Type != "PayloadTooLarge" || !strings.Contains(c.Failure.Message, "Temporal payload") {
		t.Fatalf("failure %+v", c.Failure)
	}
	if len(p.triesOf("echo")) != 0 || len(ofType(evs, history.ActivityRetryScheduled)) != 0 {
		t.Fatalf("%d calls, %d retries", len(p.triesOf("echo")), len(ofType(evs, history.ActivityRetryScheduled)))
	}
}

// TestPendingActivitiesLimit: one activity more than Temporal lets a workflow hold open
// fails its step with structural_limit instead of failing Temporal's workflow task.
func TestPendingActivitiesLimit(t *testing.T) {
	setVar(t, &MaxPendingActivities, 3)
	src := sim.Head + "steps:\n  - parallel:\n" + strings.Repeat("      - {activity: p.echo, with: 1}\n", 5)
	e, p := newEnv(t)
	run(t, e, startInput(src, nil, nil))
	c := wendFailure(t, e, history.WorkflowFailed)
	if c.Failure.Category != history.CategoryStructuralLimit || !strings.Contains(c.Failure.Message, "3 activities open on Temporal") {
		t.Fatalf("failure %+v", c.Failure)
	}
	if n := len(p.triesOf("echo")); n > 3 {
		t.Fatalf("%d activities ran at once, limit 3", n)
	}
}
