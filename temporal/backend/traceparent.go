package backend

import (
	"fmt"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/tracing"
)

// checkTraceParent refuses a start's traceparent (`wend run --traceparent`, the API's
// header) that is not W3C trace context, as a local start does. The run keeps a valid one in
// its start input: its tries are exported in that trace and their plugins get it.
func checkTraceParent(tp string) error {
	if tp == "" {
		return nil
	}
	if err := tracing.ValidTraceParent(tp); err != nil {
		return api.NewError(api.CodeInvalid, fmt.Sprintf("start: invalid input: %v", err))
	}
	return nil
}
