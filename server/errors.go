package server

import (
	"context"
	"errors"
	"net/http"

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

// Is lets errors.Is match the engine's and history's sentinels on the client side of the
// socket too, where only the code survives the trip.
func (e *Error) Is(target error) bool {
	switch target {
	case history.ErrNotFound:
		return e.Code == CodeNotFound
	case engine.ErrRunClosed:
		return e.Code == CodeRunClosed
	case engine.ErrBlocked:
		return e.Code == CodeBlocked
	case engine.ErrInvalidInput:
		return e.Code == CodeInvalid
	case engine.ErrStopped:
		return e.Code == CodeStopped
	case engine.ErrNotRetryable:
		return e.Code == CodeNotRetryable
	case engine.ErrBadID:
		return e.Code == CodeBadID
	case engine.ErrTooLarge:
		return e.Code == CodeTooLarge
	case engine.ErrSignalLimit:
		return e.Code == CodeLimit
	case engine.ErrIDTaken:
		return e.Code == CodeIDTaken
	case spec.ErrUndeclaredSignal:
		return e.Code == CodeUnknownSignal
	case spec.ErrSignalData:
		return e.Code == CodeBadSignal
	}
	return false
}

func errorf(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// statusOf gives a code its HTTP status, for errors rebuilt from a code alone.
func statusOf(code string) int {
	switch code {
	case CodeBadRequest, CodeInvalid, CodeBadWorkflow, CodeBadID:
		return http.StatusBadRequest
	case CodeBadSignal, CodeBadQuery: // signal_sent.go, query.go
		return http.StatusBadRequest
	case CodeUnknownSignal:
		return http.StatusNotFound
	case CodeQueryFailed:
		return http.StatusUnprocessableEntity
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeLimit:
		return http.StatusTooManyRequests
	case CodeIDTaken:
		return http.StatusConflict
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeRunClosed, CodeBlocked, CodeNotRetryable:
		return http.StatusConflict
	case CodeUnsupported:
		return http.StatusNotImplemented
	case CodeStopped:
		return http.StatusServiceUnavailable
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
	switch {
	case errors.Is(err, history.ErrNotFound):
		code = CodeNotFound
	case errors.Is(err, engine.ErrRunClosed):
		code = CodeRunClosed
	case errors.Is(err, engine.ErrBlocked):
		code = CodeBlocked
	case errors.Is(err, engine.ErrInvalidInput):
		code = CodeInvalid
	case errors.Is(err, engine.ErrNotRetryable):
		code = CodeNotRetryable
	case errors.Is(err, engine.ErrBadID):
		code = CodeBadID
	case errors.Is(err, engine.ErrTooLarge):
		code = CodeTooLarge
	case errors.Is(err, engine.ErrSignalLimit):
		code = CodeLimit
	case errors.Is(err, engine.ErrIDTaken):
		code = CodeIDTaken
	case errors.Is(err, spec.ErrUndeclaredSignal):
		code = CodeUnknownSignal
	case errors.Is(err, spec.ErrSignalData):
		code = CodeBadSignal
	case errors.Is(err, engine.ErrStopped), errors.Is(err, history.ErrClosed), errors.Is(err, context.Canceled):
		code = CodeStopped
	}
	return errorf(statusOf(code), code, err.Error())
}

// NewError rebuilds an error received over the wire.
func NewError(code, message string) *Error {
	return errorf(statusOf(code), code, message)
}
