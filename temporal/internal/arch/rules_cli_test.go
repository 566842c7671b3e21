package arch

// The packages users touch: the worker, the CLI backend and the binary. Kept apart from
// the driver's rules so the two land without touching one file.
func init() {
	sdk := []string{"go.temporal.io/sdk/", "go.temporal.io/api/", "google.golang.org/protobuf/"}
	allowed["internal/closing"] = []string{wend + "/history", "go.temporal.io/sdk/temporal"}
	// The worker's failpoints are empty functions outside `-tags faults` builds.
	allowed["worker"] = append([]string{wend + "/history", wend + "/plugins", wend + "/failpoint", module + "/wire", module + "/internal/closing", "golang.org/x/sys/unix"}, sdk...)
	allowed["backend"] = append([]string{wend + "/api", wend + "/history", wend + "/interpreter", wend + "/interpreter/engine", wend + "/history/export", wend + "/runview", wend + "/spec", wend + "/server",
		wend + "/schedule", wend + "/schedule/runner", module + "/wire", module + "/internal/closing"}, sdk...)
	allowed["cmd/wend-temporal"] = []string{wend + "/cli", wend + "/server", module + "/backend", module + "/worker", module + "/driver", "go.temporal.io/sdk/client", "go.temporal.io/sdk/log"}
	// The backend syncs schedules as Temporal Schedules: it reads their declarations with
	// schedule and keeps runner's records and views, so the CLI shows both engines alike.
	// The worker runs plugins and workflow code, never a database; the backend reads runs
	// through the cluster and hosts no workflow code.
	forbiddenDeps["worker"] = []string{wend + "/boltstore", wend + "/interpreter/engine", wend + "/internal/commands", wend + "/cli", wend + "/server", "go.etcd.io/bbolt"}
	// The CLI uses the backend (server.Backend), never the reverse.
	forbiddenDeps["backend"] = []string{module + "/driver", module + "/worker", wend + "/cli", wend + "/internal/commands", wend + "/boltstore"}
	forbiddenDeps["internal/closing"] = []string{wend + "/interpreter", wend + "/spec", wend + "/plugins", wend + "/internal/commands"}
}
