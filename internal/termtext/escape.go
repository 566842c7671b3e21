// Package termtext makes text from a database or a plugin safe to print: control characters and
// invalid bytes become Go escapes, so a stored value can never steer a terminal or break a
// line-oriented output.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every control character (an ANSI escape, a newline, DEL, the C1
// codes) and every invalid byte written as a Go escape (\x1b, \n, \u009b), so text from the
// database reaches a terminal as text: new clients cannot record such ids (engine.CheckID),
// but a database written before may hold them. keep lists characters to leave as they are
// (the newlines and tabs of a text block).
func Escape(s, keep string) string {
	if printableASCII(s) { // the common case, ids and step lines: nothing to decode
		return s
	}
	var b *strings.Builder // made at the first character to escape: clean text is not copied
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == utf8.RuneError && size == 1:
			esc = fmt.Sprintf(`\x%02x`, s[i])
		case unicode.IsControl(r) && !strings.ContainsRune(keep, r):
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u009b'
			esc = q[1 : len(q)-1]
		}
		if esc != "" && b == nil {
			b = &strings.Builder{}
			b.WriteString(s[:i])
		}
		if b != nil {
			if esc == "" {
				esc = s[i : i+size]
			}
			b.WriteString(esc)
		}
		i += size
	}
	if b == nil {
		return s
	}
	return b.String()
}

// OneLine is Escape keeping nothing: the text fits one line of a table or a timeline.
func OneLine(s string) string { return Escape(s, "") }

// printableASCII says whether s is all printable ASCII (space to ~), which Escape leaves as it is.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
