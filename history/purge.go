package history

import "time"

// PurgeFilter selects closed runs to delete for good (wend purge). Zero fields match every
// closed run; an open run never matches.
type PurgeFilter struct {
	ClosedBefore time.Time `json:"closed_before,omitzero"` // closed strictly before this
	Status       string    `json:"status,omitempty"`       // a closed status (completed, failed, ...)
	Workflow     string    `json:"workflow,omitempty"`     // the workflow's name (Run.Name)
}

// Empty reports whether the filter sets nothing, so it matches every closed run.
func (f PurgeFilter) Empty() bool {
	return f.ClosedBefore.IsZero() && f.Status == "" && f.Workflow == ""
}

// Match reports whether r is closed and passes the filter.
func (f PurgeFilter) Match(r Run) bool {
	return !r.Open() &&
		(f.ClosedBefore.IsZero() || r.ClosedAt.Before(f.ClosedBefore)) &&
		(f.Status == "" || r.Status == f.Status) &&
		(f.Workflow == "" || r.Name == f.Workflow)
}
