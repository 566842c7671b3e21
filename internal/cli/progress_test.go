package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
)

// TestProgressForEachOnTerminal: on a terminal a for_each's item activities update one count
// line in place; other events keep their own lines. Off a terminal every event is a line.
func TestProgressForEachOnTerminal(t *testing.T) {
	evs := []history.Event{
		{Type: history.ActivityScheduled, Step: "steps[1]@0.steps[0]", Data: []byte(`{"plugin":"p","activity":"a"}`)},
		{Type: history.ActivityScheduled, Step: "steps[1]@1.steps[0]", Data: []byte(`{"plugin":"p","activity":"a"}`)},
		{Type: history.ActivityCompleted, Step: "steps[1]@0.steps[0]", Attempt: 1},
		{Type: history.WorkflowCompleted, Data: []byte(`{}`)},
	}
	for _, tty := range []bool{true, false} {
		var buf bytes.Buffer
		p := &progress{w: &buf, tty: tty, now: func() time.Time { return time.Time{} }}
		for _, ev := range evs {
			p.observe(history.Run{WorkflowID: "w"}, ev)
		}
		out := buf.String()
		lines := strings.Count(out, "\n")
		if tty {
			if lines != 2 || !strings.Contains(out, "step 2 for_each: 1 done, 1 running") || !strings.Contains(out, "\r") {
				t.Fatalf("terminal output %q", out)
			}
		} else if lines != 4 || strings.Contains(out, "\r") {
			t.Fatalf("plain output %q", out)
		}
	}
}
