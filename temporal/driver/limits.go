package driver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/workflow"
)

// Temporal's limits (its defaults: limit.historyCount.error, limit.historySize.error,
// limit.blobSize.error, limit.numPendingActivities.error). Variables so a test can lower them.
var (
	TemporalMaxHistoryEvents = 51_200
	TemporalMaxHistoryBytes  = 50 << 20

	// WarnAt and FailAt are the fractions of Temporal's history limits at which the driver
	// logs a warning and fails the run with structural_limit: before Temporal terminates it.
	WarnAt, FailAt = 0.80, 0.95

	// MaxPayloadBytes caps what the driver hands Temporal as one payload (an activity call, a
	// child's start input, a retry's start input): wire.MaxPayloadBytes.
	MaxPayloadBytes = wire.MaxPayloadBytes

	// MaxPendingActivities is how many activities Temporal lets one workflow hold open.
	MaxPendingActivities = 2_000

	// DefaultStartToClose bounds a try whose step sets no timeout. Locally such a try may run
	// forever; Temporal needs a bound, and the heartbeat timeout notices a dead worker anyway.
	DefaultStartToClose = 365 * 24 * time.Hour

	// historyUsage reads Temporal's count of the run's history, the same on every replay.
	historyUsage = func(ctx workflow.Context) (events, bytes int) {
		info := workflow.GetInfo(ctx)
		return info.GetCurrentHistoryLength(), info.GetCurrentHistorySize()
	}
)

// overLimit checks Temporal's own history count: past FailAt of a limit it returns the
// failure message for the run, past WarnAt it logs a warning once.
func (d *driver) overLimit() string {
	events, bytes := historyUsage(d.root)
	if msg := d.check("events", events, TemporalMaxHistoryEvents); msg != "" {
		return msg
	}
	return d.check("bytes", bytes, TemporalMaxHistoryBytes)
}

func (d *driver) check(what string, n, limit int) string {
	if float64(n) >= float64(limit)*FailAt {
		return fmt.Sprintf("the run's Temporal history reached %d %s, %.0f%% of Temporal's limit of %d; use continue_as_new for long-lived workflows",
			n, what, FailAt*100, limit)
	}
	if float64(n) >= float64(limit)*WarnAt && !d.warned[what] {
		d.warned[what] = true
		d.warn("wend: the run's Temporal history is near a structural limit; over it the run fails",
			"run_id", d.st.RunID, what, n, "limit", limit)
	}
	return ""
}

// encodedSize is the size of v as the JSON payload Temporal stores.
func encodedSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // the SDK's own encoding fails the same way, with its error
	}
	return len(b)
}
