package builtin

import (
	"strings"
	"testing"
)

// TestCmdLine checks the command line given to cmd.exe against a model of how Windows reads
// it: cmd.exe removes the carets (outside quotes, and the escaped quotes never open one), then
// the program parses its arguments with the C runtime's rules. Every argument must come back
// byte for byte, and no character cmd.exe interprets may stand unescaped.
func TestCmdLine(t *testing.T) {
	args := []string{
		"", "plain", "two words", `"quoted"`, `a"b`, `back\slash`, `trail\`, `trail\\`, `\"`, `\\"x`,
		`a & del /q *`, `x | y`, `<in >out`, `(paren)`, `100%`, `%PATH%`, `!bang!`, `^caret`, "tab\there",
		`"& calc & "`, `\\server\share\`, `C:\Program Files\x\`,
	}
	line := cmdLine("echo", args)
	const prefix, suffix = `cmd.exe /S /C "`, `"`
	if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, suffix) {
		t.Fatalf("line %q lacks cmd.exe /S /C \"...\"", line)
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(line, prefix), suffix)
	rest, ok := strings.CutPrefix(inner, "echo ")
	if !ok {
		t.Fatalf("the script is not first: %q", inner)
	}
	for i := 0; i < len(rest); i++ { // every special character is escaped
		if rest[i] == '^' {
			i++
			continue
		}
		if strings.IndexByte(cmdSpecial, rest[i]) >= 0 {
			t.Fatalf("unescaped %q at %d of %q", rest[i], i, rest)
		}
	}
	got := parseArgv(uncaret(rest))
	if len(got) != len(args) {
		t.Fatalf("got %d arguments %q, want %d", len(got), got, len(args))
	}
	for i := range args {
		if got[i] != args[i] {
			t.Errorf("argument %d: got %q, want %q", i, got[i], args[i])
		}
	}
}

// uncaret removes cmd.exe's escapes: a caret makes the next character literal.
func uncaret(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '^' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseArgv splits a command line as the C runtime (CommandLineToArgvW) does: whitespace
// separates arguments outside quotes; 2n backslashes before a quote are n backslashes and the
// quote toggles quoting, 2n+1 are n and a literal quote; other backslashes are literal.
func parseArgv(s string) []string {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case (c == ' ' || c == '\t') && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
			i++
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			inArg = true
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
					i++
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
			}
		case c == '"':
			inArg = true
			quoted = !quoted
			i++
		default:
			inArg = true
			cur.WriteByte(c)
			i++
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
