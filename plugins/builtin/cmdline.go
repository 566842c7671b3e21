package builtin

import "strings"

// cmdLine is the command line that makes cmd.exe run script with args appended, each arg
// reaching the program the script runs as one argument, byte for byte. cmd /S /C strips the
// outer quotes and runs the rest. Each argument is quoted as the C runtime's argument parser
// (CommandLineToArgvW) reads it, then every character cmd.exe would interpret is escaped
// with ^, the quotes included, so cmd.exe never enters a quoted stretch and removes every
// caret. A %NAME% in an argument stays as it is unless a variable named NAME^ exists.
func cmdLine(script string, args []string) string {
	var b strings.Builder
	b.WriteString(`cmd.exe /S /C "`)
	b.WriteString(script)
	for _, a := range args {
		b.WriteByte(' ')
		for _, c := range []byte(quoteArg(a)) {
			if strings.IndexByte(cmdSpecial, c) >= 0 {
				b.WriteByte('^')
			}
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// cmdSpecial are the characters cmd.exe interprets on a command line.
const cmdSpecial = "()%!^\"<>&|"

// quoteArg quotes s as CommandLineToArgvW reads it back: in double quotes, a quote preceded by
// a backslash, and the backslashes before a quote or the closing quote doubled.
func quoteArg(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}
