package server

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/spec"
)

// Error codes: stable strings a client can branch on.
const (
	CodeBadRequest   = "bad_request"      // malformed request: bad JSON, missing field, bad query
	CodeInvalid      = "invalid_input"    // the input does not match the workflow's input schema
	CodeBadWorkflow  = "invalid_workflow" // the workflow file does not validate
	CodeNotFound     = "not_found"        // no such workflow, run or route
	CodeRunClosed    = "run_closed"       // the run has finished; signals and cancels are rejected
	CodeBlocked      = "blocked"          // the run exists but no engine here drives it
	CodeNotRetryable = "not_retryable"    // retry refused: the run did not fail in an activity, timed out or was compensated
	CodeUnsupported  = "unsupported"      // the store or server cannot do this
	CodeStopped      = "stopped"          // the engine stopped (shutdown or a failed commit)
	CodeBadID        = "invalid_id"       // an id or name too long, not UTF-8, or with a control character
	CodeTooLarge     = "too_large"        // a run's input or a signal's data over 2 MiB
	CodeLimit        = "limit_reached"    // the run holds 5,000 unconsumed signals; this one was not recorded
	CodeIDTaken      = "id_taken"         // start: the workflow id's run started with other input
	CodeQueued       = "queued"           // the run waits, queued under its concurrency key in a queue this process does not hold
	CodeInternal     = "internal"
	// CodeUnauthorized (401) and CodeForbidden (403) are the TCP listener's guard's, declared
	// in auth.go beside the model they belong to.
)

// Error is every error the Server's methods return: a message for people, a code for
// programs, and the HTTP status the code travels with.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// sentinels pair each engine and store sentinel with its code, both ways: wrap gives an
// error that is one of them the code, Is lets errors.Is find the sentinel again on the client
// side of the socket, where only the code survives the trip. First match wins in wrap.
var sentinels = []struct {
	err  error
	code string
}{
	{history.ErrNotFound, CodeNotFound},
	{engine.ErrRunClosed, CodeRunClosed},
	{engine.ErrBlocked, CodeBlocked},
	{engine.ErrInvalidInput, CodeInvalid},
	{engine.ErrNotRetryable, CodeNotRetryable},
	{engine.ErrBadID, CodeBadID},
	{engine.ErrTooLarge, CodeTooLarge},
	{engine.ErrSignalLimit, CodeLimit},
	{engine.ErrIDTaken, CodeIDTaken},
	{engine.ErrQueued, CodeQueued},
	{spec.ErrUndeclaredSignal, CodeUnknownSignal},
	{spec.ErrSignalData, CodeBadSignal},
	{engine.ErrStopped, CodeStopped},
}

// stoppedToo are errors that also mean "the engine stopped" (CodeStopped) but are not what
// errors.Is finds in a CodeStopped error: the store closed under it, or its context ended.
var stoppedToo = []error{history.ErrClosed, context.Canceled}

// statuses gives each code its HTTP status; a code not here is a 500.
var statuses = map[string]int{
	CodeBadRequest:    http.StatusBadRequest,
	CodeInvalid:       http.StatusBadRequest,
	CodeBadWorkflow:   http.StatusBadRequest,
	CodeBadID:         http.StatusBadRequest,
	CodeBadSignal:     http.StatusBadRequest, // signal_sent.go
	CodeBadQuery:      http.StatusBadRequest, // query.go
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

// Is reports whether target is the sentinel e's code stands for (see sentinels).
func (e *Error) Is(target error) bool {
	for _, s := range sentinels {
		if target == s.err {
			return e.Code == s.code
		}
	}
	return false
}

func errorf(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// statusOf gives a code its HTTP status, for errors rebuilt from a code alone.
func statusOf(code string) int {
	if st, ok := statuses[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// wrap turns an engine or store error into an *Error, keeping its text.
func wrap(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	code := CodeInternal
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			code = s.code
			break
		}
	}
	if code == CodeInternal && slices.ContainsFunc(stoppedToo, func(t error) bool { return errors.Is(err, t) }) {
		code = CodeStopped
	}
	return errorf(statusOf(code), code, err.Error())
}

// NewError rebuilds an error received over the wire.
func NewError(code, message string) *Error {
	return errorf(statusOf(code), code, message)
}
