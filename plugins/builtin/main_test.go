package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	sdk "github.com/wendflow/wend/sdk/go"
)

// TestMain serves a builtin when a plugin host started this test binary as one (the host
// tests set plugins.Options.Self to it).
func TestMain(m *testing.M) {
	if name := Requested(); name != "" {
		os.Exit(Serve(name))
	}
	os.Exit(m.Run())
}

// call runs one try of builtin.activity in process with input (any JSON-encodable value).
func call(t *testing.T, ctx context.Context, builtin, activity string, input any) (map[string]any, *sdk.Error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	act, ok := Activities(builtin)[activity]
	if !ok {
		t.Fatalf("builtin %s has no activity %s", builtin, activity)
	}
	out, err := act.Run(sdk.NewContext(ctx, sdk.Info{Activity: activity}, nil), raw)
	if err != nil {
		var se *sdk.Error
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, &sdk.Error{Type: "plain", Message: err.Error()}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}
