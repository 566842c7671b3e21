package interpreter

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TaskID and AttemptID name durable tasks and the ids plugins see: their text must stay what
// fmt's "%s#%d" wrote, and building one costs one allocation (100,000 timers firing at once
// named their tasks through fmt.Sprintf, a few allocations each).
func TestAttemptNameTimersFmtFree(t *testing.T) {
	cases := []struct {
		exec    string
		attempt int
	}{
		{"", 0}, {"r1/step/a", 1}, {"r1/step/a", 10}, {"x#y", -3}, {"ü", math.MaxInt}, {"m", math.MinInt},
	}
	for _, c := range cases {
		want := fmt.Sprintf("%s#%d", c.exec, c.attempt)
		if got := TaskID(c.exec, c.attempt); got != want {
			t.Errorf("TaskID(%q, %d) = %q, want %q", c.exec, c.attempt, got, want)
		}
		if got := AttemptID(c.exec, c.attempt); got != want {
			t.Errorf("AttemptID(%q, %d) = %q, want %q", c.exec, c.attempt, got, want)
		}
	}
	exec, attempt := strings.Repeat("run-0123456789/", 2)+"call", 300 // built at run time, as ids are
	if n := testing.AllocsPerRun(100, func() { _ = TaskID(exec, attempt) }); n > 1 {
		t.Errorf("TaskID allocates %v times, want at most 1", n)
	}
}
