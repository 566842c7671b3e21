// Command testplugin misbehaves on demand so the host's tests can watch it fail cleanly. The
// mode comes from WEND_TESTPLUGIN_MODE (the host passes it through Config.Env):
//
//	""            serve the activities below
//	garbage       print a line to stdout before serving
//	nohandshake   never serve (sleep)
//	exit          complain on stderr and exit 3 before serving
//	wrongcookie   serve with another magic cookie (go-plugin refuses and exits)
//	wrongproto    serve app protocol 2
//	plaingrpc     serve the Activities service on a unix socket without go-plugin (benchmarks)
//	nolane        serve the activities without the Lane RPC (it answers Unimplemented)
//	laneerror     answer Lane with the status WEND_TESTPLUGIN_LANE_CODE and _MESSAGE give
//	lateevent     serve without Lane, and send a heartbeat after each Execute try's final event
//	chattylane    serve a Lane that sends an event before it is asked anything
//
// WEND_TESTPLUGIN_START_MS, a number of milliseconds, makes any mode sleep that long first (a
// slow start). WEND_TESTPLUGIN_HANG_FIRST, a file path, makes the start that creates that file
// hang (no handshake); later starts find it and serve.
//
// Activities: noop, echo, now (the plugin's clock, in Unix nanoseconds), sleep {ms}, hang (ignores cancellation), crash (SIGKILLs itself
// mid-call), freeze (SIGSTOPs itself), grandchild (starts `sleep 1000` and returns its pid),
// env (returns its environment), big {bytes} (returns a string of that many bytes), stderr
// {line} (writes line to stderr), flood {mb, linekb} (writes mb MiB of linekb KiB lines to
// stderr), pid, version (its build's version, set with -ldflags -X main.version=V, and pid),
// fail_unless {version} (fails retryably, type OldCode, unless it is that version), gate
// {path} (returns its pid once path exists), leak {secret, encoding, channel} (sends secret
// back encoded through output, error, heartbeat or stderr: leak.go).
package main
