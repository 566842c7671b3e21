package runview_test

import (
	"testing"

	"github.com/wendflow/wend/runview"
)

// TestTriesText: tries had of the policy's, a try redelivered after a crash not counted.
func TestTriesText(t *testing.T) {
	try := func(outcomes ...string) []runview.Attempt {
		var out []runview.Attempt
		for i, o := range outcomes {
			out = append(out, runview.Attempt{Attempt: i + 1, Outcome: o})
		}
		return out
	}
	tests := []struct {
		name string
		act  runview.Activity
		want string
	}{
		{"completed on the third of five", runview.Activity{Tries: 5, Attempts: try(runview.AttemptFailed, runview.AttemptFailed, runview.AttemptCompleted)}, "3 of 5"},
		{"a retry owed counts", runview.Activity{Tries: 5, Attempts: try(runview.AttemptFailed, runview.AttemptScheduled)}, "2 of 5"},
		{"a redelivery does not", runview.Activity{Tries: 1, Attempts: try(runview.AttemptInterrupted, runview.AttemptCompleted)}, "1 of 1"},
		{"unlimited", runview.Activity{Attempts: try(runview.AttemptRunning)}, "1 of unlimited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runview.TriesText(tt.act); got != tt.want {
				t.Errorf("TriesText = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestErrorTextSaysTheTypeOnce: a message that starts with its type's word does not repeat it;
// a cancel with no reason says so instead of ending in a colon; a type with no message is the
// type alone.
func TestErrorTextSaysTheTypeOnce(t *testing.T) {
	tests := []struct{ typ, msg, want string }{
		{"Cancelled", "cancelled: customer disputes", "Cancelled: customer disputes"},
		{"Down", "gateway down", "Down: gateway down"},
		{"Timeout", "timeout", "Timeout: timeout"},
		{"", "cancelled: x", "cancelled: x"},
		{"Cancelled", "cancelled: ", "Cancelled (no reason given)"},
		{"Cancelled", "cancelled:  ", "Cancelled (no reason given)"},
		{"Declined", "", "Declined"},
		{"Declined", "  ", "Declined"},
	}
	for _, tt := range tests {
		if got := runview.ErrorText(tt.typ, tt.msg); got != tt.want {
			t.Errorf("ErrorText(%q, %q) = %q, want %q", tt.typ, tt.msg, got, tt.want)
		}
	}
}
