package schedule

import (
	"fmt"
	"strings"
)

// Overlap is what a fire does while a run it started earlier is still open. The names and
// meanings are Temporal's ScheduleOverlapPolicy.
type Overlap string

const (
	// Skip drops the fire (the default, as in Temporal).
	Skip Overlap = "skip"
	// BufferOne keeps one fire to start when the open run closes; later fires are dropped.
	BufferOne Overlap = "buffer_one"
	// BufferAll keeps every fire and starts them one at a time, each after the previous closes.
	BufferAll Overlap = "buffer_all"
	// AllowAll starts the fire at once, however many runs are open.
	AllowAll Overlap = "allow_all"
	// CancelOther cancels the open run and starts the fire once that run has closed.
	CancelOther Overlap = "cancel_other"
	// TerminateOther terminates the open run and starts the fire at once.
	TerminateOther Overlap = "terminate_other"
)

// Overlaps lists every policy, in the order the docs give them.
var Overlaps = []Overlap{Skip, BufferOne, BufferAll, AllowAll, CancelOther, TerminateOther}

// ParseOverlap checks a policy name; "" is Skip.
func ParseOverlap(s string) (Overlap, error) {
	if s == "" {
		return Skip, nil
	}
	for _, o := range Overlaps {
		if string(o) == s {
			return o, nil
		}
	}
	names := make([]string, len(Overlaps))
	for i, o := range Overlaps {
		names[i] = string(o)
	}
	return "", fmt.Errorf("unknown overlap %q (want %s)", s, strings.Join(names, ", "))
}

// MaxBuffered caps the fires buffer_all keeps; later ones are skipped (counted), so runs that
// never close cannot grow a schedule's state without bound.
const MaxBuffered = 1000

// Action is what one fire does now.
type Action int

const (
	// Start starts the fire's run now.
	Start Action = iota
	// Drop records the fire as skipped.
	Drop
	// Buffer keeps the fire until the open runs close.
	Buffer
	// CancelThenBuffer cancels the open runs and keeps the fire until they close.
	CancelThenBuffer
	// TerminateThenStart terminates the open runs, then starts the fire.
	TerminateThenStart
)

// Decide is the overlap decision for one fire: open is how many runs this schedule started
// are not closed, buffered how many fires already wait.
func Decide(o Overlap, open, buffered int) Action {
	if open == 0 && buffered == 0 {
		return Start
	}
	switch o {
	case AllowAll:
		return Start
	case BufferOne:
		if buffered == 0 {
			return Buffer
		}
		return Drop
	case BufferAll:
		if buffered >= MaxBuffered {
			return Drop
		}
		return Buffer
	case CancelOther:
		if open == 0 { // a cancel is already on its way: the newest fire replaces the waiting one
			return Buffer
		}
		return CancelThenBuffer
	case TerminateOther:
		return TerminateThenStart
	}
	return Drop
}
