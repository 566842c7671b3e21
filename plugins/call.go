package plugins

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/wendflow/wend/history"
)

// DescribeCommand starts the plugin cfg declares, returns its activities and stops it: `wend
// plugin describe` and `wend validate --plugins`. An empty cfg.Name becomes "plugin".
func DescribeCommand(ctx context.Context, cfg Config, opts Options) (*Description, error) {
	h, err := oneShot(&cfg, opts)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return h.Describe(ctx, cfg.Name)
}

// CallOnce starts the plugin cfg declares, runs one try of call.Activity and stops the plugin:
// `wend plugin call`. call.Plugin is set to cfg.Name; empty ids get fresh "cli-" ids and a zero
// Attempt becomes 1.
func CallOnce(ctx context.Context, cfg Config, opts Options, call history.ActivityCall, heartbeat func(history.Heartbeat)) (json.RawMessage, error) {
	h, err := oneShot(&cfg, opts)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	call.Plugin = cfg.Name
	if call.ActivityExecutionID == "" {
		call.ActivityExecutionID = "cli-" + randomID()
	}
	if call.ActivityAttemptID == "" {
		call.ActivityAttemptID = "cli-" + randomID()
	}
	if call.Attempt == 0 {
		call.Attempt = 1
	}
	return h.Execute(ctx, call, heartbeat)
}

func oneShot(cfg *Config, opts Options) (*Host, error) {
	if cfg.Name == "" {
		cfg.Name = "plugin"
	}
	return New([]Config{*cfg}, opts)
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
