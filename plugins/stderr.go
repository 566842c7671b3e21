package plugins

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

const (
	tailLines   = 20  // stderr lines kept for error messages
	tailLineMax = 500 // bytes kept per line in error messages
	lineMax     = 64 << 10
)

// stderrLog turns the plugin's stderr (as go-plugin copies it) into tagged log lines and keeps
// the last few for error messages: go-plugin alone reports a bad start as "Unrecognized remote
// plugin message" without saying why.
type stderrLog struct {
	plugin string
	log    func(plugin, line string)

	mu   sync.Mutex
	part []byte
	tail []string
}

func (s *stderrLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.part = append(s.part, p...)
			if len(s.part) >= lineMax { // a runaway line is logged in pieces
				s.emit(s.part)
				s.part = s.part[:0]
			}
			break
		}
		s.part = append(s.part, p[:i]...)
		s.emit(s.part)
		s.part = s.part[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (s *stderrLog) emit(b []byte) {
	line := strings.TrimRight(string(b), "\r")
	s.log(s.plugin, line)
	if len(line) > tailLineMax {
		line = line[:tailLineMax] + "..."
	}
	s.tail = append(s.tail, line)
	if len(s.tail) > tailLines {
		s.tail = s.tail[len(s.tail)-tailLines:]
	}
}

// last returns the plugin's last stderr lines for an error message: the one that states the
// error when one does (a runtime's trace around it is in the log already, line by line), else
// all of them; "" when it wrote nothing.
func (s *stderrLog) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := s.tail
	if len(s.part) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(s.part))
	}
	if key := keyLine(lines); key != "" && len(lines) > 1 {
		return fmt.Sprintf("; stderr: %s (the rest is logged as `plugin %s:` lines)", key, s.plugin)
	}
	if len(lines) == 0 {
		return ""
	}
	return "; stderr: " + strings.Join(lines, " | ")
}

// errorLine is a line that states an error in the usual runtimes: Python's and Node's
// "XError: message", Go's "panic: ...", Java's "Exception in ...", Ruby's "... (LoadError)".
var errorLine = regexp.MustCompile(`^(panic: |fatal error: |Exception\b|[\w.$]*(Error|Exception)\b.*:)|\(\w*(Error|Exception)\)$`)

// keyLine is the last line that states an error, or "" when none does.
func keyLine(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); errorLine.MatchString(l) {
			return l
		}
	}
	return ""
}
