package spec

import (
	"bytes"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// activitySchemaURL names an activity's schema while it compiles; like the input schema's,
// it never resolves, and the offline loader refuses it anyway.
const activitySchemaURL = "https://wend.invalid/activity-input.schema.json"

// CompileJSONSchema compiles a JSON Schema given as JSON text, such as the input schema a
// plugin declares for an activity, with the same offline compiler as workflow input schemas:
// no $ref is ever loaded from the network or a file.
func CompileJSONSchema(raw []byte) (*jsonschema.Schema, error) {
	c := withStepBudget(newOfflineCompiler(nil))
	if err := c.AddResource(activitySchemaURL, bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return compileSafely(c, activitySchemaURL)
}
