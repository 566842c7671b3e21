package commands

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

// logFormatHelp names the values of `wend serve --log-format`.
const logFormatHelp = "text, json or plain"

// serveLogger returns the writer serve's lines go through: plain passes them as they are
// (the lines 'wend run' prints too); text and json make each line one log/slog record.
// auto ("") is text on a terminal and plain otherwise, so scripts reading today's lines
// keep working and a log collector asks for json.
func serveLogger(e *env, format string) (io.Writer, error) {
	if format == "" {
		format = "plain"
		if e.colorOn(e.stderr) {
			format = "text"
		}
	}
	var h slog.Handler
	switch format {
	case "plain":
		return e.stderr, nil
	case "text":
		h = slog.NewTextHandler(e.stderr, nil)
	case "json":
		h = slog.NewJSONHandler(e.stderr, nil)
	default:
		return nil, fmt.Errorf("--log-format: %q is not one of %s", format, logFormatHelp)
	}
	return &slogLines{log: slog.New(h)}, nil
}

// slogLines turns each line written to it into a slog record. Serve's own lines ("wend: ...")
// are INFO, its errors ("wend serve: ...") ERROR; a step event's progress line
// ("  1.034s ID text") carries workflow_id and elapsed as attributes, and trace_id when the
// line ends with the run's trace id.
type slogLines struct {
	mu  sync.Mutex
	log *slog.Logger
	buf []byte
}

var progressLine = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?m?s) (\S+) (.*)$`)

// traceSuffix is the trace id a progress line ends with when the run has one (progress.go).
var traceSuffix = regexp.MustCompile(` trace_id=([0-9a-f]{32})$`)

func (s *slogLines) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := strings.IndexByte(string(s.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		s.emit(string(s.buf[:i]))
		s.buf = s.buf[i+1:]
	}
}

// flush logs a last line that had no newline.
func (s *slogLines) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 {
		s.emit(string(s.buf))
		s.buf = nil
	}
}

func (s *slogLines) emit(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	level := slog.LevelInfo
	switch {
	case strings.HasPrefix(line, "wend serve: "):
		level, line = slog.LevelError, strings.TrimPrefix(line, "wend serve: ")
	case strings.HasPrefix(line, "wend: "):
		line = strings.TrimPrefix(line, "wend: ")
	}
	if m := progressLine.FindStringSubmatch(line); m != nil {
		msg, attrs := m[3], []any{"workflow_id", m[2], "elapsed", m[1]}
		if t := traceSuffix.FindStringSubmatchIndex(msg); t != nil { // the run's trace id: an attribute of its own
			attrs, msg = append(attrs, "trace_id", msg[t[2]:t[3]]), msg[:t[0]]
		}
		s.log.Log(context.Background(), level, msg, attrs...)
		return
	}
	s.log.Log(context.Background(), level, line)
}
