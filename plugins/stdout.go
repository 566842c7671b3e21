package plugins

import (
	"bytes"
	"io"
)

// afterFirstLine reads a plugin's stdout for go-plugin, which takes the first line as the
// handshake and drops the rest, and copies everything after that first line to w.
type afterFirstLine struct {
	io.ReadCloser
	w      io.Writer
	passed bool // the first newline went by
}

func (a *afterFirstLine) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	rest := p[:n]
	if !a.passed {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return n, err
		}
		a.passed, rest = true, rest[i+1:]
	}
	if len(rest) > 0 {
		a.w.Write(rest) // a log line writer: it cannot fail
	}
	return n, err
}
