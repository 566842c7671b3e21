package engine

import (
	"encoding/json"

	"github.com/wendflow/wend/history"
)

// data is the payload of the task t stands for.
func (t activityTask) data() json.RawMessage { return history.MustData(t) }
