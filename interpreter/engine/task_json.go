package engine

import (
	"encoding/json"
	"strconv"

	"github.com/wendflow/wend/history"
)

// data is the payload of the task t stands for, exactly as json.Marshal encodes it
// (TestActivityTaskData holds it to that): one for each try a run schedules. A retry's
// bookkeeping, rare and holding a float, is left to json.Marshal, as is an input it would
// escape or reject.
func (t activityTask) data() json.RawMessage {
	if t.RetryOfTaskID != "" || t.RetryAfterAttemptID != "" || t.RetryAfterAttempt != 0 || t.RetryBackoffSeconds != 0 || t.Input == nil {
		return history.MustData(t)
	}
	b := make([]byte, 0, 160+len(t.WorkflowID)+len(t.RunID)+len(t.Step)+len(t.ExecID)+len(t.Input))
	b = append(b, `{"workflow_id":`...)
	b = history.AppendJSONString(b, t.WorkflowID)
	b = append(b, `,"run_id":`...)
	b = history.AppendJSONString(b, t.RunID)
	b = append(b, `,"step":`...)
	b = history.AppendJSONString(b, t.Step)
	b = append(b, `,"activity_execution_id":`...)
	b = history.AppendJSONString(b, t.ExecID)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(t.Attempt), 10)
	b = append(b, `,"plugin":`...)
	b = history.AppendJSONString(b, t.Plugin)
	b = append(b, `,"activity":`...)
	b = history.AppendJSONString(b, t.Activity)
	b = append(b, `,"input":`...)
	b, ok := history.AppendCompactRaw(b, t.Input)
	if !ok {
		return history.MustData(t)
	}
	if t.TimeoutMS != 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, t.TimeoutMS, 10)
	}
	if t.HeartbeatMS != 0 {
		b = append(b, `,"heartbeat_timeout_ms":`...)
		b = strconv.AppendInt(b, t.HeartbeatMS, 10)
	}
	return append(b, '}')
}
