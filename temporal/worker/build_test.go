package worker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
	"go.temporal.io/sdk/temporal"
)

// buildPlugins is fakePlugins naming the build that served the try.
type buildPlugins struct {
	fakePlugins
	build string
}

func (b *buildPlugins) ExecuteBuild(ctx context.Context, c history.ActivityCall, hb func(history.Heartbeat), served func(string)) (json.RawMessage, error) {
	served(b.build)
	return b.Execute(ctx, c, hb)
}

// TestCallBuildNamesThePluginBuild: wire.ActivityCallBuild returns the output with the build
// that served it, and a failed try carries the build in wire.ActivityFailure; the plain
// wire.ActivityCall still returns the bare output, for runs started before.
func TestCallBuildNamesThePluginBuild(t *testing.T) {
	call := wire.Call{ActivityCall: history.ActivityCall{Plugin: "p", Activity: "a"}}
	for _, tc := range []struct {
		name string
		err  error
	}{{"success", nil}, {"failure", &history.ActivityError{Type: "Boom", Message: "no"}}} {
		t.Run(tc.name, func(t *testing.T) {
			p := &buildPlugins{fakePlugins: fakePlugins{out: json.RawMessage(`{"ok":1}`), err: tc.err}, build: "b1d"}
			env, _ := callEnv(t, p)
			v, err := env.ExecuteActivity(wire.ActivityCallBuild, call)
			if tc.err != nil {
				var ae *temporal.ApplicationError
				var af wire.ActivityFailure
				if !errors.As(err, &ae) || ae.Details(&af) != nil {
					t.Fatalf("error %v, want an ApplicationError with wire.ActivityFailure", err)
				}
				if af.PluginSHA256 != "b1d" || af.Error.Type != "Boom" {
					t.Fatalf("failure %+v, want type Boom on build b1d", af)
				}
				return
			}
			var res wire.Result
			if err != nil || v.Get(&res) != nil {
				t.Fatalf("result: %v", err)
			}
			if string(res.Output) != `{"ok":1}` || res.PluginSHA256 != "b1d" {
				t.Fatalf("result %+v, want output {\"ok\":1} on build b1d", res)
			}
			v, err = env.ExecuteActivity(wire.ActivityCall, call)
			var out json.RawMessage
			if err != nil || v.Get(&out) != nil || string(out) != `{"ok":1}` {
				t.Fatalf("plain call: %s, %v", out, err)
			}
		})
	}
}
