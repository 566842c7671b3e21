// Package plugins runs activities in plugin processes over hashicorp/go-plugin gRPC: it starts
// one process per declared plugin on first use, shares it between concurrent calls, restarts it
// on the next call after it dies, rolls it to a new process when its program's file changes
// (Host.Roll forces it), and stops every process on Close. Host implements the
// engine's Activities interface; DescribeCommand and CallOnce serve `wend plugin describe|call`.
//
// Words used here:
//   - A lane is one gRPC Lane stream to a plugin process that carries many tries, one after
//     another, so a short call does not pay for setting up a stream each time.
//   - The fast lane is the same Lane messages sent as length-prefixed frames over a unix
//     socket of the plugin's own, skipping gRPC (sdk/go/fastlane).
//   - To roll a plugin is to replace its running process with a new one started from the
//     program as it is on disk now, letting the old one finish its tries first.
//   - A plugin is pinned when its Config.SHA256 is set: only a program with that checksum runs.
//
// Protocol: go-plugin in gRPC mode only, core protocol 1, app protocol 1, magic cookie
// WEND_PLUGIN=wend-activities-v1, AutoMTLS, service wend.plugin.v1.Activities (sdk/go/proto).
// Payloads (input and output JSON) are limited to MaxPayloadBytes (2 MiB) on both sides.
//
// Invariants:
//   - No orphans: each plugin runs in its own process group with a parent-death SIGKILL, set
//     from an OS thread that stays locked for the process's life (golang/go#27505). When the
//     plugin's main process exits, the rest of its group is killed before it is reaped. Stopping
//     asks go-plugin to shut the plugin down, and kills the group after Options.StopGrace even if
//     the plugin is frozen (go-plugin's Kill blocks on a SIGSTOPped plugin). Should all that
//     fail (a wrapper that clears the death signal), Options.Registry records each process by
//     pid, start time and exe, and Reap — run by the next wend on the same database — kills
//     those a dead host left, and only those whose start time and exe still match
//     (docs/reliability.md P8).
//     That is Linux. On darwin and FreeBSD (and Linux with -tags wend_portable) a watchdog
//     process joins the plugin's group and kills it when the host's lifeline pipe closes;
//     on Windows a kill-on-close Job Object holds the plugin and its children
//     (runner_<os>.go; docs/reliability.md, "Plugin processes on each OS").
//   - Calls go over Lane streams that are reused, one try at a time, when the plugin serves
//     Lane (probed once at start); otherwise each try opens an Execute stream.
//   - A plugin built with the Go SDK may offer, in answer to the probe, a fast lane: the same
//     Lane messages as length-prefixed frames on a unix socket of its own, opened with a token
//     (docs/api.md, "The plugin protocol's fast lane"). The host uses it only when the plugin is
//     reached over a unix socket, WEND_PLUGIN_FASTLANE is not "0", and the offer works; a try
//     on it fails as on a gRPC lane (a broken connection is Unavailable, an oversized frame
//     ResourceExhausted). Anything else, and every other plugin, keeps gRPC lanes.
//   - Never a hang: starting is bounded by Options.StartTimeout; a try past its deadline, or
//     cancelled, is sent a cancel and gets Options.StopGrace to end before its process group is
//     killed (the plugin restarts on the next call; other tries it was running fail as
//     PluginCrashed, retryable). A crash mid-call is reported within about a second.
//   - Every failure is a *history.ActivityError with Category set and NonRetryable true when a
//     retry cannot help (missing binary, checksum mismatch, bad handshake, exit before handshake,
//     unknown activity, payload too large). A failure to start is category plugin_start and
//     quotes the stderr line that states the error (else its tail).
//   - Output: each line the plugin writes to stderr, and to stdout after its handshake line
//     (which go-plugin would drop), goes to Options.Log with the plugin's name.
//   - A plugin sees only PATH, HOME, LANG, TZ and the variables its Config.Env names.
//   - A try's request carries the run's trace context for that try (history.ActivityCall's
//     TraceParent, set by the engine) when the run has one.
//   - With Config.SHA256 set, a binary plugin is copied into a private 0700 directory, hashed
//     there, and the copy is run, so a binary swapped after the check is never executed.
//   - Rolling: each process runs one build, the sha256 of its program (or script). Each call
//     stats that file (a hash only when the stat changed); a new build starts a new process
//     for the call and retires the old one, which finishes its calls in flight and stops when
//     idle (or at Close). A pinned plugin refuses a changed file with the checksum error.
//     ExecuteBuild tells the caller the build serving each try.
//   - A Config whose command is BuiltinCommandPrefix+NAME runs Options.Self (this executable)
//     with BuiltinEnv=NAME: a builtin plugin (plugins/builtin), otherwise like any other.
//   - Secret values exist only between resolveSecrets and the plugin: a call carries where
//     each secret is (history.SecretRef) and the places the workflow's templates put a
//     reference (history.SecretPlace); the host puts the values at those places only, just
//     before the call, and masks every common encoding of them in outputs, errors, heartbeats
//     and stderr lines (mask_encodings.go); a secret it cannot read fails the try as
//     non-retryable SecretMissing, naming no value.
//   - A plugin without Lane (Unimplemented, or Ruby's answer for an undefined bidi method) is
//     called through Execute without a warning.
package plugins
