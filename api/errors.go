package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/wendflow/wend/history"
)

// Error codes: stable strings a client can branch on.
const (
	CodeBadRequest    = "bad_request"      // malformed request: bad JSON, missing field, bad query
	CodeInvalid       = "invalid_input"    // the input does not match the workflow's input schema
	CodeBadWorkflow   = "invalid_workflow" // the workflow file does not validate
	CodeNotFound      = "not_found"        // no such workflow, run or route
	CodeRunClosed     = "run_closed"       // the run has finished; signals and cancels are rejected
	CodeBlocked       = "blocked"          // the run exists but no engine here drives it
	CodeNotRetryable  = "not_retryable"    // retry refused: the run did not fail in an activity, timed out or was compensated
	CodeUnsupported   = "unsupported"      // the store or server cannot do this
	CodeStopped       = "stopped"          // the engine stopped (shutdown or a failed commit)
	CodeBadID         = "invalid_id"       // an id or name too long, not UTF-8, or with a control character
	CodeTooLarge      = "too_large"        // a run's input or a signal's data over 2 MiB
	CodeLimit         = "limit_reached"    // the run holds 5,000 unconsumed signals; this one was not recorded
	CodeIDTaken       = "id_taken"         // start: the workflow id's run started with other input
	CodeQueued        = "queued"           // the run waits, queued under its concurrency key in a queue this process does not hold
	CodeBadQuery      = "invalid_query"    // the expression is over a limit or does not compile
	CodeQueryFailed   = "query_failed"     // it compiled but cannot be answered from this run
	CodeUnknownSignal = "unknown_signal"   // the workflow declares its signals and not this one (404)
	CodeBadSignal     = "invalid_signal"   // the data fails the schema the signal's declaration gives (400)
	CodeUnauthorized  = "unauthorized"     // no token or session where one is needed (401)
	CodeForbidden     = "forbidden"        // the read token where the act token is needed; a session's mutation without same origin and CSRF value (403)
	CodeInternal      = "internal"
)

// The sentinels a code stands for. The engine (package interpreter/engine) and the workflow
// language (package spec) return these very values, so errors.Is finds them in an *Error
// on either side of the socket: in process, and in a client where only the code came back.
var (
	// ErrRunClosed: a signal or cancel sent to a run that has finished.
	ErrRunClosed = errors.New("run has finished")
	// ErrBlocked: input to a run the engine stopped driving (replay mismatch or a history
	// it cannot apply); the run keeps its history untouched.
	ErrBlocked = errors.New("run is blocked")
	// ErrStopped: the engine was closed or hit a fatal store error.
	ErrStopped = errors.New("engine stopped")
	// ErrInvalidInput: a start's input does not match the workflow's input schema.
	ErrInvalidInput = errors.New("invalid input")
	// ErrNotRetryable: a retry of a run that cannot resume: one that did not fail, timed
	// out, failed other than in an activity, or was compensated.
	ErrNotRetryable = errors.New("run cannot be retried")
	// ErrBadID: an id or name that is empty where one is needed, too long, not UTF-8, or
	// holds a control character.
	ErrBadID = errors.New("bad id")
	// ErrTooLarge: an input or signal data over the payload limit.
	ErrTooLarge = errors.New("payload too large")
	// ErrSignalLimit: a signal a run cannot hold, as it holds the most unconsumed signals.
	ErrSignalLimit = errors.New("too many unconsumed signals")
	// ErrIDTaken: a start under a workflow id whose run started with other input.
	ErrIDTaken = errors.New("workflow id taken")
	// ErrQueued: the run waits under its concurrency key.
	ErrQueued = errors.New("run is queued")
	// ErrUndeclaredSignal: the workflow declares its signals and not this one.
	ErrUndeclaredSignal = errors.New("signal not declared by the workflow")
	// ErrSignalData: the signal's data fails the schema its declaration gives.
	ErrSignalData = errors.New("signal data does not match its schema")
)

// Error is every error the API answers: a message for people, a code for programs, and the
// HTTP status the code travels with.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// sentinels pairs each sentinel error with its code, both ways: SentinelCode gives an error
// that is one of them the code, Is lets errors.Is find the sentinel again on the client side
// of the socket, where only the code survives the trip. First match wins.
var sentinels = []struct {
	err  error
	code string
}{
	{history.ErrNotFound, CodeNotFound},
	{ErrRunClosed, CodeRunClosed},
	{ErrBlocked, CodeBlocked},
	{ErrInvalidInput, CodeInvalid},
	{ErrNotRetryable, CodeNotRetryable},
	{ErrBadID, CodeBadID},
	{ErrTooLarge, CodeTooLarge},
	{ErrSignalLimit, CodeLimit},
	{ErrIDTaken, CodeIDTaken},
	{ErrQueued, CodeQueued},
	{ErrUndeclaredSignal, CodeUnknownSignal},
	{ErrSignalData, CodeBadSignal},
	{ErrStopped, CodeStopped},
}

// Is reports whether target is the sentinel e's code stands for (see sentinels).
func (e *Error) Is(target error) bool {
	for _, s := range sentinels {
		if target == s.err {
			return e.Code == s.code
		}
	}
	return false
}

// SentinelCode is the code of the first sentinel err is (errors.Is), or "" for none.
func SentinelCode(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return ""
}

// statuses gives each code its HTTP status; a code not here is a 500.
var statuses = map[string]int{
	CodeBadRequest:    http.StatusBadRequest,
	CodeInvalid:       http.StatusBadRequest,
	CodeBadWorkflow:   http.StatusBadRequest,
	CodeBadID:         http.StatusBadRequest,
	CodeBadSignal:     http.StatusBadRequest,
	CodeBadQuery:      http.StatusBadRequest,
	CodeUnknownSignal: http.StatusNotFound,
	CodeQueryFailed:   http.StatusUnprocessableEntity,
	CodeTooLarge:      http.StatusRequestEntityTooLarge,
	CodeLimit:         http.StatusTooManyRequests,
	CodeIDTaken:       http.StatusConflict,
	CodeUnauthorized:  http.StatusUnauthorized,
	CodeForbidden:     http.StatusForbidden,
	CodeNotFound:      http.StatusNotFound,
	CodeRunClosed:     http.StatusConflict,
	CodeBlocked:       http.StatusConflict,
	CodeQueued:        http.StatusConflict,
	CodeNotRetryable:  http.StatusConflict,
	CodeUnsupported:   http.StatusNotImplemented,
	CodeStopped:       http.StatusServiceUnavailable,
}

// StatusOf gives a code its HTTP status, for errors rebuilt from a code alone.
func StatusOf(code string) int {
	if st, ok := statuses[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// NewError rebuilds an error received over the wire.
func NewError(code, message string) *Error {
	return &Error{Status: StatusOf(code), Code: code, Message: message}
}

// ErrorBody is the wire form of an error (a stable format clients may parse).
type ErrorBody struct {
	Error *Error `json:"error"`
}

// DecodeError reads an error answer's body: the API's JSON error, or, for a body that is
// not ours (a proxy, a crash mid-answer), CodeInternal naming the status.
func DecodeError(status int, body []byte) *Error {
	var b ErrorBody
	if json.Unmarshal(body, &b) == nil && b.Error != nil && b.Error.Code != "" {
		b.Error.Status = status
		return b.Error
	}
	return &Error{Status: status, Code: CodeInternal, Message: fmt.Sprintf("server answered %d %s", status, http.StatusText(status))}
}
