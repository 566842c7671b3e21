package sdk

import (
	"bytes"
	"context"
	"io"
	"testing"
)

func TestLogfPrefixesEveryLineWithRunAndStep(t *testing.T) {
	var buf bytes.Buffer
	defer func(w io.Writer) { logOut = w }(logOut)
	logOut = &buf
	for _, tt := range []struct {
		name string
		log  func(c *Context)
		want string
	}{
		{"one line", func(c *Context) { c.Logf("charging %d", 7) }, "run=r1 step=steps[0]: charging 7\n"},
		{"several lines", func(c *Context) { c.Logf("a\nb\n") }, "run=r1 step=steps[0]: a\nrun=r1 step=steps[0]: b\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			buf.Reset()
			c := NewContext(context.Background(), Info{RunID: "r1", StepPath: "steps[0]"}, nil)
			tt.log(c)
			if got := buf.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
