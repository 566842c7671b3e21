package wire

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
)

// Call is the ActivityCall activity's input: the plugin call, and whether the worker beats
// for the plugin. A first try's empty LastProgress arrives as the JSON null
// (json.RawMessage("null")), which means none.
type Call struct {
	history.ActivityCall
	// HostHeartbeats is set when the step declares no heartbeat_timeout: the driver then gives
	// the try DefaultHeartbeatTimeout and the worker beats every third of it, so a dead worker
	// is noticed in seconds. A step with its own heartbeat_timeout gets only the plugin's
	// beats, so a plugin that stops beating times out as it does locally.
	HostHeartbeats bool `json:"host_heartbeats,omitempty"`
}

// DefaultHeartbeatTimeout is the heartbeat timeout the driver gives a try whose step sets
// none, so a worker that dies mid-call is noticed in seconds, not at the step's timeout. The
// ActivityCall activity heartbeats on the plugin's behalf every HeartbeatTimeout/3 (from
// activity.GetInfo), carrying the plugin's latest progress as Progress.
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
