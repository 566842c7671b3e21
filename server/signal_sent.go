package server

import "github.com/wendflow/wend/history"

// SignalSent is the answer to POST /v1/runs/{id}/signals: the run's record after the send,
// and whether the send was a resend of a signal id the workflow had already recorded (then
// nothing was recorded now; the answer is still a success, so a client that lost the first
// answer can simply send again).
type SignalSent struct {
	Run       history.Run `json:"run"`
	Duplicate bool        `json:"duplicate"`
}
