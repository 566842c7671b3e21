package engine

import (
	"encoding/json"
	"strconv"

	"github.com/wendflow/wend/history"
)

// data encodes t exactly as history.MustData (json.Marshal) does (TestActivityTaskData and
// FuzzActivityTaskData hold it to that), by hand for a first try, the task every activity
// step stores; a retry's task, with its float backoff, and input json.Marshal would escape
// further, go to json.Marshal.
func (t activityTask) data() json.RawMessage {
	if t.RetryOfTaskID != "" || t.RetryAfterAttemptID != "" || t.RetryAfterAttempt != 0 || t.RetryBackoffSeconds != 0 ||
		t.Input == nil {
		return history.MustData(t)
	}
	b := make([]byte, 0, 160+len(t.WorkflowID)+len(t.RunID)+2*len(t.Step)+len(t.ExecID)+len(t.Input))
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
		return history.MustData(t) // its escaping, or json.Marshal's error as MustData reports it
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
