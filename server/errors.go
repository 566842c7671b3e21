package server

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// stoppedToo are errors that also mean "the engine stopped" (CodeStopped) but are not what
// errors.Is finds in a CodeStopped error: the store closed under it, or its context ended.
var stoppedToo = []error{history.ErrClosed, context.Canceled}

func errorf(status int, code, msg string) *api.Error {
	return &api.Error{Status: status, Code: code, Message: msg}
}

// wrap turns an engine or store error into an *api.Error, keeping its text: a sentinel's
// code (api.SentinelCode), else CodeStopped for stoppedToo, else CodeInternal.
func wrap(err error) *api.Error {
	if err == nil {
		return nil
	}
	var e *api.Error
	if errors.As(err, &e) {
		return e
	}
	code := cmp.Or(api.SentinelCode(err), api.CodeInternal)
	if code == api.CodeInternal && slices.ContainsFunc(stoppedToo, func(t error) bool { return errors.Is(err, t) }) {
		code = api.CodeStopped
	}
	return errorf(api.StatusOf(code), code, err.Error())
}
