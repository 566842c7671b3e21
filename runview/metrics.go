package runview

import "time"

// Metrics are the export's operator_metrics: counters an operator reads first (the seed names
// activities.retrying, activities.failed_attempts and backlog.retrying_activities). They are
// computed from the other sections, so they can never disagree with them.
type Metrics struct {
	Activities    ActivityMetrics     `json:"activities"`
	Backlog       Backlog             `json:"backlog"`
	Timers        TimerMetrics        `json:"timers"`
	Signals       SignalMetrics       `json:"signals"`
	Children      ChildMetrics        `json:"children"`
	Compensations CompensationMetrics `json:"compensations"`
	Failures      FailureMetrics      `json:"failures"`
	History       HistoryMetrics      `json:"history"`
}

// ActivityMetrics count activity executions by status, and their tries.
type ActivityMetrics struct {
	Total     int `json:"total"`
	Scheduled int `json:"scheduled"`
	Running   int `json:"running"`
	Retrying  int `json:"retrying"` // executions waiting for a retry
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Attempts  int `json:"attempts"` // tries recorded, including ones owed
	// FailedAttempts counts tries that failed, timed-out ones included.
	FailedAttempts   int `json:"failed_attempts"`
	TimedOutAttempts int `json:"timed_out_attempts"`
	Retries          int `json:"retries"` // ActivityRetryScheduled events
	// NonRetryableFailures counts executions that failed for good on a non-retryable error.
	NonRetryableFailures int `json:"non_retryable_failures"`
	Heartbeats           int `json:"heartbeats"`
}

// Backlog is the durable work the run is owed.
type Backlog struct {
	// PendingActivities are executions not closed yet: scheduled, running or retrying (the
	// seed puts a retrying execution back to pending).
	PendingActivities  int `json:"pending_activities"`
	RetryingActivities int `json:"retrying_activities"`
	PendingTimers      int `json:"pending_timers"`
	PendingChildren    int `json:"pending_children"`
}

// TimerMetrics count timers by status.
type TimerMetrics struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Fired     int `json:"fired"`
	Cancelled int `json:"cancelled"`
}

// SignalMetrics count received signals.
type SignalMetrics struct {
	Received int `json:"received"`
	Applied  int `json:"applied"`
	Pending  int `json:"pending"`
}

// ChildMetrics count children and awaited workflows by status.
type ChildMetrics struct {
	Total     int `json:"total"`
	Running   int `json:"running"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// CompensationMetrics count compensations by status.
type CompensationMetrics struct {
	Total     int `json:"total"`
	Started   int `json:"started"` // begun and not finished
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// FailureMetrics count failures[] rows.
type FailureMetrics struct {
	Total        int            `json:"total"`
	NonRetryable int            `json:"non_retryable"`
	ByCategory   map[string]int `json:"by_category"`
}

// HistoryMetrics describe the history's size, for the structural limits.
type HistoryMetrics struct {
	Events  int    `json:"events"`
	LastSeq uint64 `json:"last_seq"`
	// PayloadBytes is the total size of the events' data.
	PayloadBytes int       `json:"payload_bytes"`
	LastEventAt  time.Time `json:"last_event_at,omitzero"`
}

func (v *View) computeMetrics() {
	m := &v.Metrics
	for _, a := range v.Activities {
		m.Activities.Total++
		switch a.Status {
		case ActivityScheduled:
			m.Activities.Scheduled++
		case ActivityRunning:
			m.Activities.Running++
		case ActivityRetrying:
			m.Activities.Retrying++
		case ActivityCompleted:
			m.Activities.Completed++
		case ActivityFailed:
			m.Activities.Failed++
			if a.NonRetryable {
				m.Activities.NonRetryableFailures++
			}
		case ActivityCancelled:
			m.Activities.Cancelled++
		}
		for _, at := range a.Attempts {
			m.Activities.Attempts++
			m.Activities.Heartbeats += at.Heartbeats
			switch at.Outcome {
			case AttemptTimedOut:
				m.Activities.TimedOutAttempts++
				m.Activities.FailedAttempts++
			case AttemptFailed:
				m.Activities.FailedAttempts++
			}
			if at.Retry != nil {
				m.Activities.Retries++
			}
		}
	}
	m.Backlog.RetryingActivities = m.Activities.Retrying
	m.Backlog.PendingActivities = m.Activities.Scheduled + m.Activities.Running + m.Activities.Retrying

	for _, t := range v.Timers {
		m.Timers.Total++
		switch t.Status {
		case TimerScheduled:
			m.Timers.Pending++
		case TimerFired:
			m.Timers.Fired++
		case TimerCancelled:
			m.Timers.Cancelled++
		}
	}
	m.Backlog.PendingTimers = m.Timers.Pending

	for _, s := range v.Signals {
		m.Signals.Received++
		if s.Pending {
			m.Signals.Pending++
		} else {
			m.Signals.Applied++
		}
	}

	for _, c := range v.Children {
		m.Children.Total++
		switch c.Status {
		case ChildRunning:
			m.Children.Running++
		case ChildCompleted:
			m.Children.Completed++
		case ChildFailed:
			m.Children.Failed++
		}
	}
	m.Backlog.PendingChildren = m.Children.Running

	for _, c := range v.Compensations {
		m.Compensations.Total++
		switch c.Status {
		case CompensationStarted:
			m.Compensations.Started++
		case CompensationCompleted:
			m.Compensations.Completed++
		case CompensationFailed:
			m.Compensations.Failed++
		}
	}

	m.Failures.ByCategory = map[string]int{}
	for _, f := range v.Failures {
		m.Failures.Total++
		if f.NonRetryable {
			m.Failures.NonRetryable++
		}
		m.Failures.ByCategory[f.FailureCategory]++
	}

	for _, e := range v.Events {
		m.History.Events++
		m.History.LastSeq = max(m.History.LastSeq, e.Seq)
		m.History.PayloadBytes += len(e.Data)
		m.History.LastEventAt = e.Time
	}
}
