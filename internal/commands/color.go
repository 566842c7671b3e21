package commands

import (
	"io"
	"os"

	"github.com/wendflow/wend/history"
)

// colorOn reports whether output to w may carry colour: only on a terminal, and never when
// NO_COLOR is set to anything non-empty (https://no-color.org). Piped or redirected output
// is always plain, so scripts and goldens never see escape codes.
func (e *env) colorOn(w io.Writer) bool {
	if e.getenv("NO_COLOR") != "" || e.getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ANSI colours for statuses. Every coloured cell starts with a 5-byte code and ends with the
// 4-byte reset, so a tabwriter column of them stays aligned (the header gets the same).
const (
	ansiGreen   = "\x1b[32m"
	ansiRed     = "\x1b[31m"
	ansiYellow  = "\x1b[33m"
	ansiCyan    = "\x1b[36m"
	ansiDefault = "\x1b[39m"
	ansiReset   = "\x1b[0m"
)

// statusColor is the colour of a run status: green completed, red failed (timed out
// included), yellow cancelled (terminated included), cyan running, the default otherwise.
func statusColor(status string) string {
	switch status {
	case history.StatusCompleted:
		return ansiGreen
	case history.StatusFailed:
		return ansiRed
	case history.StatusCancelled:
		return ansiYellow
	case history.StatusRunning:
		return ansiCyan
	}
	return ansiDefault
}

// paint wraps text in color when on; off, it returns text unchanged.
func paint(on bool, color, text string) string {
	if !on {
		return text
	}
	return color + text + ansiReset
}
