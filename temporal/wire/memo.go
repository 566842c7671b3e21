package wire

// Memo keys of a WorkflowType execution, so a list shows runs without asking a worker: the
// client that starts a run and the driver that starts a child write MemoName, MemoSpecFile
// and MemoSpecSHA256; the driver writes MemoClosedReason (history.Closed* reasons) when the
// run closes, since Temporal's status alone cannot tell failed, timed_out and
// compensation_failed apart.
const (
	MemoName         = "name"
	MemoSpecFile     = "spec_file"
	MemoSpecSHA256   = "spec_sha256"
	MemoClosedReason = "closed_reason"
)
