package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter"
	"github.com/wendflow/wend/spec"
)

// Limits on what clients hand the engine, checked before anything is recorded (docs/api.md,
// "Limits"). A request over one is refused with a message naming the limit; no run fails and
// the engine goes on.
const (
	// MaxIDBytes bounds workflow ids, signal names and signal ids: they are keys in the store
	// and words on a terminal, so short and printable.
	MaxIDBytes = 255
	// MaxPayloadBytes bounds a run's input and a signal's data, as it bounds activity payloads.
	MaxPayloadBytes = interpreter.MaxPayloadBytes
)

// Errors of requests the engine refuses at its edge.
var (
	// ErrBadID is returned for an id or name that is empty where one is needed, too long,
	// not UTF-8, or holds a control character.
	ErrBadID = api.ErrBadID
	// ErrTooLarge is returned for an input or signal data over MaxPayloadBytes.
	ErrTooLarge = api.ErrTooLarge
	// ErrSignalLimit is returned for a signal a run cannot hold: it already holds
	// interpreter.MaxSignals that nobody consumed. The run goes on without it.
	ErrSignalLimit = api.ErrSignalLimit
	// ErrIDTaken is returned by Start for a workflow id whose run started with other input.
	ErrIDTaken = api.ErrIDTaken
)

// CheckID refuses an id or name a client may not use: more than MaxIDBytes bytes, invalid
// UTF-8, or a control character (a newline, an ANSI escape) that would reach a terminal or a
// log line raw. what names the field ("workflow id", "signal name"). Empty is the caller's
// call: some ids are optional.
func CheckID(what, id string) error {
	switch {
	case len(id) > MaxIDBytes:
		return edgeErr(ErrBadID, "the %s is %d bytes, over the limit of %d", what, len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return edgeErr(ErrBadID, "the %s %q is not UTF-8", what, id)
	}
	for i, r := range id {
		if unicode.IsControl(r) {
			return edgeErr(ErrBadID, "the %s %q has a control character (%U at byte %d); ids are printable text", what, id, r, i)
		}
	}
	return nil
}

// CheckPayload refuses an input or signal data over MaxPayloadBytes, or whose arrays and
// objects nest deeper than spec.MaxDataDepth: both before anything decodes or validates it.
func CheckPayload(what string, raw []byte) error {
	if len(raw) > MaxPayloadBytes {
		return edgeErr(ErrTooLarge, "the %s is %d bytes, over the limit of %d (2 MiB)", what, len(raw), MaxPayloadBytes)
	}
	if err := spec.CheckJSONDepth(what, raw); err != nil {
		return edgeErr(ErrTooLarge, "%s", strings.TrimSuffix(err.Error(), ": "+spec.ErrDataTooDeep.Error()))
	}
	return nil
}

// storeRefused says whether a commit failed for its content alone (history.ErrRefused): that
// fails the request the content came from, and the engine goes on. Any other commit error
// stops the engine (see fatal).
func storeRefused(err error) bool { return errors.Is(err, history.ErrRefused) }

// edgeError reads as its message alone and matches its kind with errors.Is.
type edgeError struct {
	kind error
	msg  string
}

func (e *edgeError) Error() string { return e.msg }
func (e *edgeError) Unwrap() error { return e.kind }

func edgeErr(kind error, format string, args ...any) error {
	return &edgeError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
