package tracing

import (
	"context"
	"errors"
	"io"
	"sync"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// consoleExporter is the stdout exporter writing through a buffer that is flushed once a
// batch: one write for a batch of spans instead of one a span. The stdout exporter writes
// each span as one line in one Write, and the buffer only ever flushes after a whole Write,
// so a span's line is never split by another writer of the same stream (the step lines).
type consoleExporter struct {
	sdktrace.SpanExporter
	mu  sync.Mutex
	buf *lineBuffer
}

// consoleFlushAt is the buffered size past which a batch's lines are written before its end.
const consoleFlushAt = 64 << 10

func newConsoleExporter(w io.Writer) (*consoleExporter, error) {
	buf := &lineBuffer{w: w}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(buf))
	if err != nil {
		return nil, err
	}
	return &consoleExporter{SpanExporter: exp, buf: buf}, nil
}

func (c *consoleExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.SpanExporter.ExportSpans(ctx, spans)
	return errors.Join(err, c.buf.flush())
}

// lineBuffer gathers whole Writes and writes them out together.
type lineBuffer struct {
	w   io.Writer
	b   []byte
	err error // the first write error, returned by flush
}

// Write never fails: an error writing out is kept for the batch's flush to return.
func (l *lineBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if len(l.b) >= consoleFlushAt {
		l.writeOut()
	}
	return len(p), nil
}

func (l *lineBuffer) writeOut() {
	if len(l.b) == 0 {
		return
	}
	if _, err := l.w.Write(l.b); err != nil && l.err == nil {
		l.err = err
	}
	l.b = l.b[:0]
}

// flush writes out what is buffered and returns the first error since the last flush.
func (l *lineBuffer) flush() error {
	l.writeOut()
	err := l.err
	l.err = nil
	return err
}
