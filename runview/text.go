package runview

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wendflow/wend/history"
)

// FailureStyle says how much of a failure FailureText writes.
type FailureStyle struct {
	// Clip cuts the error ("Type: message") at this many bytes; 0 keeps it whole.
	Clip int
	// Propagation writes the category as category/propagation_kind.
	Propagation bool
	// At names steps: when set, the step and attempt the failure happened at follow.
	At func(path string) string
}

// FailureText is a failure in the words every reader of a run sees (wend show, the export's
// text, progress lines, the web UI): the error, then in brackets its category and a
// non-retryable mark, e.g. "CardDeclined: card declined [activity, non-retryable]". It is the
// only place a failure becomes text.
func FailureText(f Failure, st FailureStyle) string {
	s := ErrorText(f.Type, f.Message)
	if st.Clip > 0 {
		s = Clip(s, st.Clip)
	}
	s += " [" + f.FailureCategory
	if st.Propagation {
		s += "/" + f.PropagationKind
	}
	if f.NonRetryable {
		s += ", non-retryable"
	}
	s += "]"
	if st.At != nil && f.Step != "" {
		s += " at " + st.At(f.Step)
		if f.Attempt > 0 {
			s += fmt.Sprintf(" #%d", f.Attempt)
		}
	}
	return s
}

// FailureOf is the row of a failure payload read on its own, without the event that recorded
// it (a category left out reads as Unclassified).
func FailureOf(f history.Failure) Failure {
	row := Failure{FailureCategory: f.Category, PropagationKind: f.PropagationKind, NonRetryable: f.NonRetryable,
		Type: f.Type, Message: f.Message, Step: f.Step, ActivityExecutionID: f.ActivityExecID, Attempt: f.Attempt, Details: f.Details}
	if row.FailureCategory == "" {
		row.FailureCategory = Unclassified
	}
	return row
}

// Failure is the row of a try's error.
func (e AttemptError) Failure() Failure {
	return Failure{Type: e.Type, Message: e.Message, NonRetryable: e.NonRetryable, FailureCategory: e.FailureCategory}
}

// ErrorText is an error's type and message: "CardDeclined: card declined", or the message
// alone.
func ErrorText(typ, msg string) string {
	if typ == "" {
		return msg
	}
	rest := strings.TrimSpace(MessageAfter(typ, msg))
	switch {
	case rest == "" && strings.TrimSpace(msg) != "":
		return typ + " (no reason given)" // "cancelled: " with an empty reason
	case rest == "":
		return typ
	}
	return typ + ": " + MessageAfter(typ, msg)
}

// MessageAfter is an error's message to show after its type: without the type's word when the
// message starts with it, so a cancel reads "Cancelled: customer disputes", not "Cancelled:
// cancelled: customer disputes".
func MessageAfter(typ, msg string) string {
	if rest, ok := strings.CutPrefix(msg, strings.ToLower(typ)+": "); ok && typ != "" {
		return rest
	}
	return msg
}

// TriesText is how many tries an activity has had (a retry owed included) of those its policy
// allows: "3 of 5", "1 of unlimited". A try cut short by a crash (interrupted, then
// redelivered) does not count against the policy.
func TriesText(a Activity) string {
	used := 0
	for _, at := range a.Attempts {
		if at.Outcome != AttemptInterrupted {
			used++
		}
	}
	limit := "unlimited"
	if a.Tries > 0 {
		limit = strconv.Itoa(a.Tries)
	}
	return fmt.Sprintf("%d of %s", used, limit)
}

// Stamp is a full time for a person: RFC 3339 in UTC, to the nanosecond the history has.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Clock is the compact time of timeline rows: milliseconds matter when tries follow each
// other, the zone does not (everything is UTC).
func Clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") }

// Clip keeps long JSON values and messages from flooding a terminal; the export has them in
// full. It never cuts a character in half.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
