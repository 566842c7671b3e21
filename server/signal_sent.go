package server

import "github.com/wendflow/wend/history"

// Codes of a signal a workflow's contract (spec `signals:`) refuses; nothing is recorded.
const (
	CodeUnknownSignal = "unknown_signal" // the workflow declares its signals and not this one (404)
	CodeBadSignal     = "invalid_signal" // the data fails the schema the signal's declaration gives (400)
)

// SignalSent is the answer to POST /v1/runs/{id}/signals: the run's record after the send,
// and whether the send was a resend of a signal id the workflow had already recorded (then
// nothing was recorded now; the answer is still a success, so a client that lost the first
// answer can simply send again).
type SignalSent struct {
	Run       history.Run `json:"run"`
	Duplicate bool        `json:"duplicate"`
}
