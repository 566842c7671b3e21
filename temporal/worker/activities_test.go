package worker

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// fakePlugins plays a plugin: it reports the given progress by heartbeat, then returns out
// or err, and keeps the call it got.
type fakePlugins struct {
	progress []string
	out      json.RawMessage
	err      error
	got      history.ActivityCall
}

func (f *fakePlugins) Execute(_ context.Context, c history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	f.got = c
	for _, p := range f.progress {
		hb(history.Heartbeat{Progress: json.RawMessage(p)})
	}
	return f.out, f.err
}

// callEnv runs Activities.Call on the SDK's activity test environment and collects the
// progress of every heartbeat it records.
func callEnv(t *testing.T, p Plugins) (*testsuite.TestActivityEnvironment, func() []string) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Activities{Plugins: p}
	a.Register(env)
	var mu sync.Mutex
	var beats []string
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var pr wire.Progress
		if err := d.Get(&pr); err != nil {
			t.Errorf("heartbeat detail is not wire.Progress: %v", err)
		}
		mu.Lock()
		beats = append(beats, string(pr.Progress))
		mu.Unlock()
	})
	return env, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), beats...)
	}
}

// TestCallForwardsPluginProgress: a plugin heartbeat reaches Temporal carrying its progress
// (so a timed-out try hands it on), the output comes back as is, and a first try's
// JSON null LastProgress reaches the plugin as none.
func TestCallForwardsPluginProgress(t *testing.T) {
	p := &fakePlugins{progress: []string{`{"done":1}`, `{"done":2}`}, out: json.RawMessage(`{"ok":true}`)}
	env, beats := callEnv(t, p)
	v, err := env.ExecuteActivity(wire.ActivityCall, wire.Call{ActivityCall: history.ActivityCall{Plugin: "p", Activity: "a", LastProgress: json.RawMessage("null")}})
	if err != nil {
		t.Fatal(err)
	}
	var out json.RawMessage
	if err := v.Get(&out); err != nil || string(out) != `{"ok":true}` {
		t.Fatalf("output %s, %v", out, err)
	}
	// The SDK throttles heartbeats (the later one waits for the interval), so the first
	// reaches Temporal at once and carries the first progress.
	if got := beats(); len(got) == 0 || got[0] != `{"done":1}` {
		t.Fatalf("heartbeats carried %q, want the first progress first", got)
	}
	if p.got.LastProgress != nil {
		t.Fatalf("plugin got LastProgress %s, want none", p.got.LastProgress)
	}
}

// TestCallErrorMapping: a plugin's failure reaches the driver as an ApplicationError of the
// plugin's type and message, non-retryable as the plugin said, with wire.ActivityFailure
// (the error as wend records it and the last progress) as its detail; anything else a
// plugin host returns is an internal WorkerError.
func TestCallErrorMapping(t *testing.T) {
	details := json.RawMessage(`{"code":42}`)
	cases := []struct {
		name     string
		err      error
		progress []string
		want     wire.ActivityFailure
	}{
		{"retryable", &history.ActivityError{Type: "Flaky", Message: "try again", Category: history.CategoryActivity},
			[]string{`{"at":3}`, `{"at":4}`},
			wire.ActivityFailure{Error: history.ActivityError{Type: "Flaky", Message: "try again", Category: history.CategoryActivity}, Progress: json.RawMessage(`{"at":4}`)}},
		{"non-retryable with details", &history.ActivityError{Type: "Declined", Message: "card declined", NonRetryable: true, Details: details, Category: history.CategoryActivity},
			nil,
			wire.ActivityFailure{Error: history.ActivityError{Type: "Declined", Message: "card declined", NonRetryable: true, Details: details, Category: history.CategoryActivity}}},
		{"plain error", errors.New("socket closed"), nil,
			wire.ActivityFailure{Error: history.ActivityError{Type: "WorkerError", Message: "socket closed", Category: history.CategoryInternal}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, _ := callEnv(t, &fakePlugins{err: c.err, progress: c.progress})
			_, err := env.ExecuteActivity(wire.ActivityCall, wire.Call{ActivityCall: history.ActivityCall{Plugin: "p", Activity: "a"}})
			var ae *temporal.ApplicationError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %#v, want an ApplicationError", err)
			}
			if ae.Type() != c.want.Error.Type || ae.NonRetryable() != c.want.Error.NonRetryable {
				t.Fatalf("type %q non-retryable %v, want %q %v", ae.Type(), ae.NonRetryable(), c.want.Error.Type, c.want.Error.NonRetryable)
			}
			var got wire.ActivityFailure
			if err := ae.Details(&got); err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(c.want)
			if string(gj) != string(wj) {
				t.Fatalf("detail %s\nwant   %s", gj, wj)
			}
		})
	}
}

// TestWorkerBeatsOnlyWithoutStepHeartbeat: the worker beats every third of the try's
// heartbeat timeout when the driver asks it to (every try under wire.Call.Liveness; before
// that, a step without heartbeat_timeout), else never, as for older runs' steps with one.
func TestWorkerBeatsOnlyWithoutStepHeartbeat(t *testing.T) {
	for _, c := range []struct {
		host          bool
		timeout, want time.Duration
	}{
		{true, wire.DefaultHeartbeatTimeout, wire.DefaultHeartbeatTimeout / 3},
		{false, wire.DefaultHeartbeatTimeout, 0}, // heartbeat_timeout: 30s in the spec
		{false, time.Second, 0},
		{true, 0, 0},
	} {
		if got := workerBeat(c.host, c.timeout); got != c.want {
			t.Errorf("workerBeat(%v, %s) = %s, want %s", c.host, c.timeout, got, c.want)
		}
	}
}

// pacedPlugins plays a plugin that beats every `every` (never if 0) until `lasts` has passed
// or the try's context ends, then returns {"ok":true}, or the context's error.
type pacedPlugins struct{ every, lasts time.Duration }

func (f pacedPlugins) Execute(ctx context.Context, _ history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	done := time.After(f.lasts)
	var tick <-chan time.Time
	if f.every > 0 {
		t := time.NewTicker(f.every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			return json.RawMessage(`{"ok":true}`), nil
		case <-tick:
			hb(history.Heartbeat{})
		}
	}
}

// TestWorkerEnforcesStepHeartbeatTimeout: under liveness, Temporal's heartbeat timeout is the
// worker's, so the worker itself holds a step's heartbeat_timeout against the plugin's beats:
// a plugin silent for longer is cancelled and the try fails as the local engine fails it (a
// timeout of type heartbeat_timeout); a plugin that beats in time runs as long as it needs.
func TestWorkerEnforcesStepHeartbeatTimeout(t *testing.T) {
	cases := []struct {
		name    string
		plugin  pacedPlugins
		wantErr bool
	}{
		{"silent plugin times out", pacedPlugins{every: 0, lasts: time.Minute}, true},
		{"beating plugin outlives the timeout", pacedPlugins{every: 20 * time.Millisecond, lasts: 600 * time.Millisecond}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, _ := callEnv(t, c.plugin)
			call := wire.Call{ActivityCall: history.ActivityCall{Plugin: "p", Activity: "a", Attempt: 2}, Liveness: true, HeartbeatTimeoutMS: 200}
			_, err := env.ExecuteActivity(wire.ActivityCall, call)
			if !c.wantErr {
				if err != nil {
					t.Fatalf("err %v, want the try to complete", err)
				}
				return
			}
			var ae *temporal.ApplicationError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %#v, want an ApplicationError", err)
			}
			var got wire.ActivityFailure
			if err := ae.Details(&got); err != nil {
				t.Fatal(err)
			}
			want := history.ActivityError{Category: history.CategoryTimeout, Type: "heartbeat_timeout", Message: "attempt 2 exceeded its heartbeat_timeout"}
			if got.Error.Category != want.Category || got.Error.Type != want.Type || got.Error.Message != want.Message || got.Error.NonRetryable {
				t.Fatalf("failure %+v, want %+v", got.Error, want)
			}
		})
	}
}
