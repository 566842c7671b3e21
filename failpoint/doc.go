// Package failpoint marks the places where wend's crash tests kill the process: named points in
// the engine, the schedule runner and the Temporal worker where a build with `-tags faults` can
// make the process die as a power cut would, without cleanup.
//
// Outside a `-tags faults` build it does nothing: Hit is an empty function the compiler
// removes, reads no environment and costs nothing, so product code calls it freely.
//
// In a `-tags faults` build, WEND_FAILPOINTS="after-schedule=3,after-call=1" makes the 3rd pass
// through "after-schedule" exit with status 137 (as SIGKILL does), and so on.
package failpoint
