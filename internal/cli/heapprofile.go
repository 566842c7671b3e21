package cli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// heapProfileEnv names a file wend serve writes a heap profile of its live heap to when it is
// asked to stop, before it closes anything (go tool pprof reads it): what the engine holds
// with every run open, for docs/performance.md's 100,000-run figures (go run ./bench -only
// idle -idle-dump DIR sets it).
const heapProfileEnv = "WEND_HEAPPROFILE"

// writeHeapProfile writes the profile heapProfileEnv asks for, if any; a failure is reported
// on stderr and does not stop the stop.
func writeHeapProfile(stderr io.Writer) {
	path := os.Getenv(heapProfileEnv)
	if path == "" {
		return
	}
	runtime.GC() // the profile's in-use figures are as of the last GC
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "wend serve: %s: %v\n", heapProfileEnv, err)
	}
}
