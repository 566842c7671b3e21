package engine

import (
	"encoding/json"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
)

// activityTask is the payload of an activity task: everything needed to make the call after
// a restart without the run's in-memory state.
type activityTask struct {
	WorkflowID  string          `json:"workflow_id"`
	RunID       string          `json:"run_id"`
	Step        string          `json:"step"`
	ExecID      string          `json:"activity_execution_id"`
	Attempt     int             `json:"attempt"`
	Plugin      string          `json:"plugin"`
	Activity    string          `json:"activity"`
	Input       json.RawMessage `json:"input"`
	TimeoutMS   int64           `json:"timeout_ms,omitempty"`
	HeartbeatMS int64           `json:"heartbeat_timeout_ms,omitempty"`
	// Retry bookkeeping from the seeds: which task and attempt this retry follows.
	RetryOfTaskID       string  `json:"retry_of_task_id,omitempty"`
	RetryAfterAttemptID string  `json:"retry_after_attempt_id,omitempty"`
	RetryAfterAttempt   int     `json:"retry_after_attempt,omitempty"`
	RetryBackoffSeconds float64 `json:"retry_backoff_seconds,omitempty"`
}

// stepTask is the payload of timer, child and wait tasks.
type stepTask struct {
	RunID   string          `json:"run_id"`
	Step    string          `json:"step"`
	TimerID string          `json:"timer_id,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"` // ChildSchedule or WaitSchedule
}

func timerTaskID(runID, timerID string) string { return runID + "/timer/" + timerID }
func stepTaskID(runID, step string) string     { return runID + "/step/" + step }

// tasksFor adds to c the task changes the events of one run imply. schedules carries the
// activity schedules of the run by execution id, for retries.
func tasksFor(rec history.Run, evs []history.Event, schedules func(execID string) (history.ActivitySchedule, bool), c *history.Commit) {
	for _, ev := range evs {
		switch ev.Type {
		case history.ActivityScheduled:
			a, ok := schedules(ev.ActivityExecutionID) // the interpreter's copy: no decoding
			if !ok {
				a, _ = history.DataOf[history.ActivitySchedule](ev)
			}
			c.PutTasks = append(c.PutTasks, activityTaskOf(rec, ev, a, nil))
		case history.ActivityRetryScheduled:
			rs, _ := history.DataOf[history.RetrySchedule](ev)
			a, ok := schedules(ev.ActivityExecutionID)
			if !ok {
				continue
			}
			ev.Attempt = rs.NextAttempt
			c.PutTasks = append(c.PutTasks, activityTaskOf(rec, ev, a, &rs))
		case history.ActivityCompleted, history.ActivityAttemptFailed, history.ActivityTimedOut, history.ActivityCancelled,
			history.ActivityAttemptInterrupted:
			c.DeleteTasks = append(c.DeleteTasks, interpreter.TaskID(ev.ActivityExecutionID, ev.Attempt))
		case history.TimerScheduled:
			ts, _ := history.DataOf[history.TimerSchedule](ev)
			c.PutTasks = append(c.PutTasks, history.Task{ID: timerTaskID(rec.RunID, ts.TimerID), RunID: rec.RunID,
				Kind: history.TaskTimer, AvailableAt: ts.FireAt,
				Data: history.MustData(stepTask{RunID: rec.RunID, Step: ev.Step, TimerID: ts.TimerID})})
		case history.TimerFired, history.TimerCancelled:
			ref, _ := history.DataOf[history.TimerRef](ev)
			c.DeleteTasks = append(c.DeleteTasks, timerTaskID(rec.RunID, ref.TimerID))
		case history.ChildWorkflowScheduled, history.WorkflowWaitScheduled:
			kind := history.TaskChild
			if ev.Type == history.WorkflowWaitScheduled {
				kind = history.TaskWait
			}
			c.PutTasks = append(c.PutTasks, history.Task{ID: stepTaskID(rec.RunID, ev.Step), RunID: rec.RunID, Kind: kind,
				AvailableAt: ev.Time, Data: history.MustData(stepTask{RunID: rec.RunID, Step: ev.Step, Data: ev.Data})})
		case history.ChildWorkflowCompleted, history.ChildWorkflowFailed, history.WorkflowWaitCompleted, history.WorkflowWaitFailed:
			c.DeleteTasks = append(c.DeleteTasks, stepTaskID(rec.RunID, ev.Step))
		}
	}
}

func activityTaskOf(rec history.Run, ev history.Event, a history.ActivitySchedule, rs *history.RetrySchedule) history.Task {
	return storedActivityTask(activityTaskData(rec, ev, a, rs))
}

// storedActivityTask is the task stored for an activity's payload, due at avail.
func storedActivityTask(t activityTask, avail time.Time) history.Task {
	return history.Task{ID: interpreter.TaskID(t.ExecID, t.Attempt), RunID: t.RunID, Kind: history.TaskActivity,
		AvailableAt: avail, Data: t.data()}
}

// activityTaskData is an activity task's payload and when it becomes due.
func activityTaskData(rec history.Run, ev history.Event, a history.ActivitySchedule, rs *history.RetrySchedule) (activityTask, time.Time) {
	t := activityTask{WorkflowID: rec.WorkflowID, RunID: rec.RunID, Step: ev.Step, ExecID: ev.ActivityExecutionID,
		Attempt: ev.Attempt, Plugin: a.Plugin, Activity: a.Activity, Input: a.Input, TimeoutMS: a.TimeoutMS,
		HeartbeatMS: a.HeartbeatTimeout}
	avail := ev.Time
	if rs != nil {
		t.RetryOfTaskID, t.RetryAfterAttemptID = rs.RetryOfTaskID, rs.RetryAfterAttemptID
		t.RetryAfterAttempt, t.RetryBackoffSeconds = rs.RetryAfterAttempt, rs.RetryBackoffSeconds
		avail = rs.AvailableAt
	}
	return t, avail
}
