// Package faults holds the failpoints of crash tests: named places in the engine, the
// schedule runner and the Temporal worker where a test build (`-tags faults`) can make the
// process die as a power cut would, without cleanup. In a normal build Hit is an empty
// function the compiler removes.
//
// WEND_FAILPOINTS="after-schedule=3,after-call=1" makes the 3rd pass through
// "after-schedule" exit with status 137 (as SIGKILL does), and so on.
package faults
