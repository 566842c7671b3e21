// Command wendserve is the wend command line as cmd/wend builds it, for the yardstick's
// `wend serve` systems, with two switches read from the environment:
//
//   - WEND_YARDSTICK_NOOP=1: every activity call is answered in the process with its input
//     (cli.Extensions.Activities), as the Temporal worker's no-op activity is, so no plugin
//     process is started; the rest of `wend serve` (control socket, engine, store) is the same.
//   - WEND_YARDSTICK_CPUPROFILE=FILE: a CPU profile of the whole process, written when the
//     command returns (for serve: after SIGTERM).
//
// The yardstick builds it and the real cmd/wend; users run cmd/wend.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/wendflow/wend/cli"
	"github.com/wendflow/wend/history"
)

type noop struct{}

func (noop) Execute(_ context.Context, c history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	return c.Input, nil
}

func main() { os.Exit(run()) }

func run() int {
	var x cli.Extensions
	if os.Getenv("WEND_YARDSTICK_NOOP") == "1" {
		x.Activities = noop{}
	}
	if path := os.Getenv("WEND_YARDSTICK_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wendserve:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "wendserve:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	return cli.MainWith(x)
}
