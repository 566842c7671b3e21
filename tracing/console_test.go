package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// writes records each Write it is given; fail makes every Write fail.
type writes struct {
	got  [][]byte
	fail error
}

func (w *writes) Write(p []byte) (int, error) {
	w.got = append(w.got, bytes.Clone(p))
	if w.fail != nil {
		return 0, w.fail
	}
	return len(p), nil
}

// TestConsoleExportsWholeLines: the console exporter writes a batch's spans in few writes,
// each of whole JSON lines, one line a span; a write error is the batch's error.
func TestConsoleExportsWholeLines(t *testing.T) {
	tests := []struct {
		name      string
		spans     int
		maxWrites int
		fail      error
	}{
		{"one span", 1, 1, nil},
		{"a small batch is one write", 50, 1, nil},
		{"a large batch writes as it goes", 2000, 2000 * 2048 / consoleFlushAt, nil},
		{"a failed write fails the batch", 3, 1, errors.New("disk full")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &writes{fail: tt.fail}
			exp, err := newConsoleExporter(w)
			if err != nil {
				t.Fatal(err)
			}
			stubs := make(tracetest.SpanStubs, tt.spans)
			for i := range stubs {
				stubs[i].Name = fmt.Sprintf("span %d", i)
			}
			err = exp.ExportSpans(context.Background(), stubs.Snapshots())
			if tt.fail != nil {
				if !errors.Is(err, tt.fail) {
					t.Fatalf("ExportSpans = %v, want %v", err, tt.fail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(w.got) == 0 || len(w.got) > tt.maxWrites {
				t.Errorf("%d writes, want 1 to %d", len(w.got), tt.maxWrites)
			}
			n := 0
			for _, p := range w.got {
				if !bytes.HasSuffix(p, []byte("\n")) {
					t.Fatalf("a write ends mid-line: %q", p[max(0, len(p)-40):])
				}
				for line := range bytes.Lines(p) {
					var span struct{ Name string }
					if err := json.Unmarshal(line, &span); err != nil || span.Name != fmt.Sprintf("span %d", n) {
						t.Fatalf("line %d: %q (%v), want span %d", n, line, err, n)
					}
					n++
				}
			}
			if n != tt.spans {
				t.Errorf("%d lines, want %d", n, tt.spans)
			}
		})
	}
}
