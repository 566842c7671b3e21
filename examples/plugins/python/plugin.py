#!/usr/bin/env python3
"""wend's example activity plugin in Python, on the wend_plugin SDK (sdk/python).

The conformance set every example plugin shares: greet, echo, sleep, fail, record, resume.
Install the SDK (pip install ./sdk/python) or run it from a checkout, where it finds sdk/python
itself. Use it from a workflow with `plugins: {demo: {command: [python3, plugin.py]}}`.
"""

import json
import os
import sys
import time

try:
    import wend_plugin  # noqa: F401
except ImportError:  # run from a wend checkout without installing the SDK
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "sdk", "python"))
try:
    from wend_plugin import ActivityError, NonRetryable, RetryableError, activity, serve
except ImportError as e:
    # wend shows this (the tail of the plugin's stderr) in the start error. A python3 from pyenv
    # or a virtualenv first on PATH is the usual cause: Debian's grpcio is for /usr/bin/python3.
    sys.stderr.write(
        "wend python plugin: %s: the interpreter %s has no grpcio/protobuf. "
        "Install them for it (pip install grpcio protobuf), or name an interpreter that has them "
        "in the workflow: plugins: {NAME: {command: [/usr/bin/python3, %s]}} "
        "(Debian: apt-get install python3-grpcio python3-protobuf).\n"
        % (e, sys.executable, os.path.basename(__file__)))
    sys.exit(3)

INT = {"type": "integer", "minimum": 0}


@activity(input={"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
          output={"type": "object", "required": ["greeting"], "properties": {"greeting": {"type": "string"}}})
def greet(ctx, inp):
    """Returns a greeting for name."""
    return {"greeting": "hello, %s" % inp.get("name", "")}


@activity(input={}, output={})
def echo(ctx, inp):
    """Returns its input unchanged."""
    return inp


@activity(input={"type": "object", "required": ["ms"], "properties": {"ms": INT}},
          output={"type": "object", "required": ["slept_ms"], "properties": {"slept_ms": {"type": "integer"}}})
def sleep(ctx, inp):
    """Sleeps ms milliseconds, heartbeating every 100 ms; stops early when cancelled."""
    start = time.time()
    end = start + inp.get("ms", 0) / 1000.0
    while time.time() < end:
        ctx.sleep(min(0.1, max(0.0, end - time.time())))
        ctx.heartbeat({"slept_ms": int((time.time() - start) * 1000)})
    return {"slept_ms": int((time.time() - start) * 1000)}


@activity(input={"type": "object", "properties": {"type": {"type": "string"}, "message": {"type": "string"},
                                                  "non_retryable": {"type": "boolean"}}}, output={})
def fail(ctx, inp):
    """Fails with the given error."""
    raise ActivityError(inp.get("message", ""), inp.get("type", ""), bool(inp.get("non_retryable")), inp.get("details"))


@activity(input={"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "note": {}}},
          output={"type": "object"})
def record(ctx, inp):
    """Appends one JSON line describing this try to path and fsyncs it."""
    if not inp.get("path"):
        raise NonRetryable("record: path is required", type="BadInput")
    line = {"activity_execution_id": ctx.activity_execution_id, "activity_attempt_id": ctx.activity_attempt_id,
            "attempt": ctx.attempt, "note": inp.get("note"), "pid": os.getpid(), "traceparent": ctx.traceparent}
    fd = os.open(inp["path"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(line, separators=(",", ":")) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return line


@activity(input={"type": "object", "required": ["pages"], "properties": {"pages": INT, "fail_at": {"type": "integer"}}},
          output={"type": "object", "required": ["resumed_from", "pages"],
                  "properties": {"resumed_from": {"type": "integer"}, "pages": {"type": "integer"}}})
def resume(ctx, inp):
    """Does pages 1..pages, heartbeating {page} after each; resumes after the last progress's page; a first try fails retryably before page fail_at."""
    pages, fail_at = inp.get("pages", 0), inp.get("fail_at")
    start = (ctx.last_progress or {}).get("page", 0)
    for page in range(start + 1, pages + 1):
        if page == fail_at and ctx.last_progress is None:
            raise RetryableError("resume: interrupted before page %d" % page, type="Interrupted")
        ctx.heartbeat({"page": page})
    return {"resumed_from": start, "pages": pages}


if __name__ == "__main__":
    serve()
