// Command demo is wend's example activity plugin in Go. It implements the conformance set every
// example plugin shares (greet, echo, sleep, fail, record, resume); tests in plugins/ run it,
// and a workflow uses it with `plugins: {demo: ./plugins/demo/demo}` after
// `go build -o examples/plugins/demo/demo ./examples/plugins/demo`.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	sdk "github.com/wendflow/wend/sdk/go"
)

func main() {
	sdk.Serve(sdk.Activities{
		"greet": sdk.Func(greet,
			`{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`,
			`{"type":"object","required":["greeting"],"properties":{"greeting":{"type":"string"}}}`).
			Describe("Returns a greeting for name."),
		"echo": sdk.Func(echo, `{}`, `{}`).
			Describe("Returns its input unchanged."),
		"sleep": sdk.Func(sleep,
			`{"type":"object","required":["ms"],"properties":{"ms":{"type":"integer","minimum":0},"heartbeat_every_ms":{"type":"integer","minimum":1}}}`,
			`{"type":"object","required":["slept_ms"],"properties":{"slept_ms":{"type":"integer"}}}`).
			Describe("Sleeps ms milliseconds, heartbeating every heartbeat_every_ms (default 100); stops early when cancelled."),
		"fail": sdk.Func(fail,
			`{"type":"object","properties":{"type":{"type":"string"},"message":{"type":"string"},"non_retryable":{"type":"boolean"}}}`,
			`{}`).
			Describe("Fails with the given error."),
		"record": sdk.Func(record,
			`{"type":"object","required":["path"],"properties":{"path":{"type":"string"},"note":{}}}`,
			`{"type":"object"}`).
			Describe("Appends one JSON line describing this try to path and fsyncs it."),
		"resume": sdk.Func(resume,
			`{"type":"object","required":["pages"],"properties":{"pages":{"type":"integer","minimum":0},"fail_at":{"type":"integer"}}}`,
			`{"type":"object","required":["resumed_from","pages"],"properties":{"resumed_from":{"type":"integer"},"pages":{"type":"integer"}}}`).
			Describe("Does pages 1..pages, heartbeating {page} after each; resumes after the last progress's page; a first try fails retryably before page fail_at."),
	})
}

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func greet(_ *sdk.Context, in greetIn) (greetOut, error) {
	return greetOut{Greeting: "hello, " + in.Name}, nil
}

func echo(_ *sdk.Context, in json.RawMessage) (json.RawMessage, error) {
	if len(in) == 0 {
		return json.RawMessage("null"), nil
	}
	return in, nil
}

type sleepIn struct {
	MS             int64 `json:"ms"`
	HeartbeatEvery int64 `json:"heartbeat_every_ms"` // 0: every 100 ms
}

type sleepOut struct {
	SleptMS int64 `json:"slept_ms"`
}

func sleep(ctx *sdk.Context, in sleepIn) (sleepOut, error) {
	start := time.Now()
	done := time.After(time.Duration(in.MS) * time.Millisecond)
	every := 100 * time.Millisecond
	if in.HeartbeatEvery > 0 {
		every = time.Duration(in.HeartbeatEvery) * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return sleepOut{SleptMS: time.Since(start).Milliseconds()}, nil
		case <-tick.C:
			_ = ctx.Heartbeat(map[string]int64{"slept_ms": time.Since(start).Milliseconds()})
		case <-ctx.Done():
			return sleepOut{}, ctx.Err()
		}
	}
}

type failIn struct {
	Type         string          `json:"type"`
	Message      string          `json:"message"`
	NonRetryable bool            `json:"non_retryable"`
	Details      json.RawMessage `json:"details"`
}

func fail(_ *sdk.Context, in failIn) (struct{}, error) {
	e := &sdk.Error{Type: in.Type, Message: in.Message, NonRetryable: in.NonRetryable}
	if len(in.Details) > 0 {
		e.Details = in.Details
	}
	return struct{}{}, e
}

type recordIn struct {
	Path string          `json:"path"`
	Note json.RawMessage `json:"note"`
}

type recordLine struct {
	ActivityExecutionID string          `json:"activity_execution_id"`
	ActivityAttemptID   string          `json:"activity_attempt_id"`
	Attempt             int             `json:"attempt"`
	Note                json.RawMessage `json:"note"`
	PID                 int             `json:"pid"`
	TraceParent         string          `json:"traceparent"` // the try's W3C trace context; "" without one
}

func record(ctx *sdk.Context, in recordIn) (recordLine, error) {
	if in.Path == "" {
		return recordLine{}, sdk.NonRetryable(sdk.TypeBadInput, "record: path is required")
	}
	note := in.Note
	if len(note) == 0 {
		note = json.RawMessage("null")
	}
	line := recordLine{
		ActivityExecutionID: ctx.ActivityExecutionID, ActivityAttemptID: ctx.ActivityAttemptID,
		Attempt: ctx.Attempt, Note: note, PID: os.Getpid(), TraceParent: ctx.TraceParent,
	}
	b, err := json.Marshal(line)
	if err != nil {
		return recordLine{}, err
	}
	f, err := os.OpenFile(in.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return recordLine{}, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return recordLine{}, fmt.Errorf("record: %w", err)
	}
	if err := f.Sync(); err != nil {
		return recordLine{}, fmt.Errorf("record: %w", err)
	}
	return line, nil
}

type resumeIn struct {
	Pages  int `json:"pages"`
	FailAt int `json:"fail_at"` // 0: never
}

type resumeOut struct {
	ResumedFrom int `json:"resumed_from"`
	Pages       int `json:"pages"`
}

// resumeProgress is what resume heartbeats after each page, and so what a retry finds in
// ctx.LastProgress.
type resumeProgress struct {
	Page int `json:"page"`
}

func resume(ctx *sdk.Context, in resumeIn) (resumeOut, error) {
	var last *resumeProgress // nil on a first try
	if len(ctx.LastProgress) > 0 {
		if err := json.Unmarshal(ctx.LastProgress, &last); err != nil {
			return resumeOut{}, fmt.Errorf("resume: decode last progress: %w", err)
		}
	}
	start := 0
	if last != nil {
		start = last.Page
	}
	for page := start + 1; page <= in.Pages; page++ {
		if page == in.FailAt && last == nil {
			return resumeOut{}, sdk.NewError("Interrupted", fmt.Sprintf("resume: interrupted before page %d", page))
		}
		_ = ctx.Heartbeat(resumeProgress{Page: page})
	}
	return resumeOut{ResumedFrom: start, Pages: in.Pages}, nil
}
