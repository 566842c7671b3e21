package sdk

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// logOut is where Logf writes: the plugin's stderr, which wend's host reads line by line and
// shows in its log. A variable so that tests can read it.
var (
	logOut io.Writer = os.Stderr
	logMu  sync.Mutex
)

// Logf writes a line to the plugin's stderr, which wend shows, starting with the try's run
// and step ("run=RUN step=STEP: message"), so that the lines of two runs calling the plugin at
// once can be told apart. A message of several lines is written as several lines, each with
// the prefix.
func (c *Context) Logf(format string, args ...any) {
	prefix := "run=" + c.RunID + " step=" + c.StepPath + ": "
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(fmt.Sprintf(format, args...), "\n"), "\n") {
		b.WriteString(prefix)
		b.WriteString(line)
		b.WriteByte('\n')
	}
	logMu.Lock() // one write a call: two tries' lines never interleave mid-line
	defer logMu.Unlock()
	_, _ = io.WriteString(logOut, b.String())
}
