package sdk

import (
	"encoding/json"
	"fmt"
)

// Activities maps activity names to their implementations.
type Activities map[string]Activity

// Activity is one activity a plugin offers. Most plugins build it with Func.
type Activity struct {
	Description string
	// InputSchema and OutputSchema are JSON Schemas shown by `wend plugin describe` and used by
	// `wend validate --plugins`; nil means any JSON.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Run executes one try with the raw JSON input and returns a value to marshal as JSON.
	Run func(ctx *Context, input json.RawMessage) (any, error)
}

// Func makes an Activity from a typed function. The input is JSON-decoded into In (a decoding
// error fails the try as non-retryable BadInput) and Out is JSON-encoded. The schemas are JSON
// text; "" means any JSON. An invalid schema panics at start-up, where a typo belongs.
func Func[In, Out any](fn func(ctx *Context, in In) (Out, error), inputSchema, outputSchema string) Activity {
	return Activity{
		InputSchema:  mustSchema("input", inputSchema),
		OutputSchema: mustSchema("output", outputSchema),
		Run: func(ctx *Context, raw json.RawMessage) (any, error) {
			var in In
			if len(raw) > 0 {
				if err := json.Unmarshal(raw, &in); err != nil {
					return nil, NonRetryable(TypeBadInput, fmt.Sprintf("decode input of %s: %v", ctx.Activity, err))
				}
			}
			return fn(ctx, in)
		},
	}
}

// Describe returns a copy of a with its description set.
func (a Activity) Describe(description string) Activity {
	a.Description = description
	return a
}

func mustSchema(which, s string) json.RawMessage {
	if s == "" {
		return nil
	}
	if !json.Valid([]byte(s)) {
		panic(fmt.Sprintf("sdk: %s schema is not valid JSON: %s", which, s))
	}
	return json.RawMessage(s)
}
