// Package e2e holds no code: its tests run wend on a Temporal server embedded in the test
// process (devserver), with workers and the CLI as real processes, and hold wend on Temporal
// to the local engine — the same examples give the same normalised exports (parity), a
// worker killed (SIGKILL at random, or at its failpoints in a `-tags faults` build) loses
// and duplicates nothing (crash), and recorded histories still replay through today's
// driver (golden).
//
//	cd temporal/e2e && GOTOOLCHAIN=go1.26.11 go test ./...
//
// WEND_E2E_KILLS and WEND_E2E_RUNS raise the crash test's worker kills (default 12) and runs
// (default 3).
package e2e
