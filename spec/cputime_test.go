package spec

import (
	"runtime"
	"testing"
	"time"
)

// cpuLimit is a hang guard measured in CPU time of the calling thread, not wall-clock time: on a
// loaded machine (load average 20 on 2 cores) a 30 ms parse took 31 s of wall time while
// using the same CPU time. Inputs are refused in a few milliseconds (BenchmarkBadInput and
// BenchmarkExpressionAmplification have the figures); a second of CPU means something went
// quadratic.
const cpuLimit = time.Second

// timeScale multiplies cpuLimit; race_test.go raises it under the race detector.
var timeScale time.Duration = 1

// cpuOf runs f on a locked OS thread and returns the CPU time that thread spent in it (user and
// system), which waiting for a core does not count. ok is false where the platform cannot
// measure one thread; allocation bounds still apply there.
func cpuOf(f func()) (used time.Duration, ok bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, ok := threadCPU()
	f()
	after, _ := threadCPU()
	return after - before, ok
}

// checkCPU fails t if f used more than cpuLimit (scaled) of CPU.
func checkCPU(t *testing.T, what string, f func()) {
	t.Helper()
	used, ok := cpuOf(f)
	if !ok {
		t.Logf("%s: thread CPU time not measurable here", what)
		return
	}
	t.Logf("%s: %v CPU", what, used)
	if used > cpuLimit*timeScale {
		t.Errorf("%s used %v of CPU, over the %v hang guard", what, used, cpuLimit*timeScale)
	}
}
