package wire

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
)

// Call is the ActivityCall activity's input: the plugin call, and how the try is kept alive.
// A first try's empty LastProgress arrives as the JSON null (json.RawMessage("null")), which
// means none.
type Call struct {
	history.ActivityCall
	// Liveness is set by drivers that give every try LivenessTimeout as Temporal's heartbeat
	// timeout: the worker beats every third of it whatever the step declares, so a Temporal
	// heartbeat timeout means the worker died (a redelivery, not a try), and the worker
	// enforces the step's own heartbeat_timeout (HeartbeatTimeoutMS) against the plugin's beats.
	Liveness bool `json:"liveness,omitempty"`
	// HeartbeatTimeoutMS is the step's heartbeat_timeout (0: none), with Liveness.
	HeartbeatTimeoutMS int64 `json:"heartbeat_timeout_ms,omitempty"`
	// HostHeartbeats is how runs started before Liveness ask for beats: set when the step
	// declares no heartbeat_timeout, with DefaultHeartbeatTimeout as Temporal's.
	HostHeartbeats bool `json:"host_heartbeats,omitempty"`
	// Workflow is the run's workflow name and RunTraceParent the traceparent the run was
	// started with (empty: none), so a tracing worker exports the try in the run's trace and
	// passes the plugin the try's traceparent as the local engine does.
	Workflow       string `json:"workflow,omitempty"`
	RunTraceParent string `json:"run_traceparent,omitempty"`
}

// LivenessTimeout is Temporal's heartbeat timeout of every try under Liveness: a worker that
// dies mid-call is noticed this long after its last beat, and the try is redelivered. The
// worker beats every third of it and sends at most one beat per MaxBeatInterval (the SDK's
// throttle, which would otherwise be 0.8 of the timeout and leave a loaded worker 1.6 s to
// spare): so a live worker's beats arrive with 6 s to spare, and each running try costs the
// server about one RecordActivityTaskHeartbeat call every 2.7 s.
const LivenessTimeout = 8 * time.Second

// MaxBeatInterval is the longest a worker holds back a heartbeat (the SDK's
// MaxHeartbeatThrottleInterval).
const MaxBeatInterval = 2 * time.Second

// WorkerStopped is the failure type of a try its stopping worker cancelled once its grace ran
// out: under Liveness the driver records it as interrupted and redelivers it.
const WorkerStopped = "WorkerStopped"

// DefaultHeartbeatTimeout is the heartbeat timeout that runs started before Liveness give a
// try whose step sets none.
const DefaultHeartbeatTimeout = 30 * time.Second

// Progress is the heartbeat detail of an ActivityCall try: the plugin's latest progress,
// empty when it reported none. The driver reads it from a heartbeat timeout
// (TimeoutError.LastHeartbeatDetails) and records it, so the next try gets it as LastProgress.
type Progress struct {
	Progress json.RawMessage `json:"progress,omitempty"`
}

// ActivityFailure is the single detail of the ApplicationError an ActivityCall try fails
// with (the error's type is Error.Type): the plugin's failure as wend records it, and the
// progress the try last reported, for the next try.
type ActivityFailure struct {
	Error    history.ActivityError `json:"error"`
	Progress json.RawMessage       `json:"progress,omitempty"`
	// PluginSHA256 is the plugin build the try ran on, when the worker knows it.
	PluginSHA256 string `json:"plugin_sha256,omitempty"`
}

// Result is what ActivityCallBuild returns: the plugin's output and the sha256 of the plugin
// program that served the try ("" when the worker cannot tell), which the driver records on
// the try's outcome as the local engine does.
type Result struct {
	Output       json.RawMessage `json:"output"`
	PluginSHA256 string          `json:"plugin_sha256,omitempty"`
}

// AwaitResult is what ActivityAwait returns once the awaited workflow id's run has closed
// for good (a continue-as-new chain is followed to its end): the run, its wend status
// (history.Status*) and the payload of its terminal event. The activity heartbeats every
// HeartbeatTimeout/3 while it waits (the driver sets DefaultHeartbeatTimeout) and may be
// retried by Temporal: waiting has no effect to repeat.
type AwaitResult struct {
	RunID  string         `json:"run_id"`
	Status string         `json:"status"`
	Closed history.Closed `json:"closed"`
}
