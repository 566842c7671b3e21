#!/usr/bin/env python3
"""wend's example activity plugin in Python.

Implements the conformance set every example plugin shares (greet, echo, sleep, fail, record,
resume) with Debian's python3-grpcio and python3-protobuf only. Besides wend.plugin.v1.Activities it
does what go-plugin does for Go plugins: checks the magic cookie, serves the gRPC health service
(service "plugin": SERVING) and GRPCController.Shutdown, negotiates AutoMTLS (mtls.py), prints
the handshake line, and exits when its host goes away.

Use it from a workflow with `plugins: {demo: {command: [python3, plugin.py]}}` (path relative
to the workflow file).
"""

import json
import os
import sys
import threading
import time
from concurrent import futures

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

try:
    import grpc  # noqa: E402

    import activities_pb2  # noqa: E402
    import activities_pb2_grpc  # noqa: E402
    import grpc_controller_pb2  # noqa: E402
    import grpc_controller_pb2_grpc  # noqa: E402
    import health_pb2  # noqa: E402
    import health_pb2_grpc  # noqa: E402
    import mtls  # noqa: E402
except ImportError as e:
    # wend shows this (the tail of the plugin's stderr) in the start error. A python3 from
    # pyenv or a virtualenv first on PATH is the usual cause: Debian's grpcio is installed for
    # /usr/bin/python3 only.
    sys.stderr.write(
        "wend python plugin: %s: the interpreter %s has no grpcio/protobuf. "
        "Install them for it (pip install grpcio protobuf), or name an interpreter that has them "
        "in the workflow: plugins: {NAME: {command: [/usr/bin/python3, %s]}} "
        "(Debian: apt-get install python3-grpcio python3-protobuf).\n"
        % (e, sys.executable, os.path.basename(__file__))
    )
    sys.exit(3)

# Must match plugins/internal/wire.
COOKIE_KEY, COOKIE_VALUE = "WEND_PLUGIN", "wend-activities-v1"
APP_PROTOCOL = 1
MAX_PAYLOAD = 2 << 20
MAX_MESSAGE = 16 << 20


class ActivityError(Exception):
    """A typed activity failure; non_retryable fails the activity whatever its retry policy."""

    def __init__(self, type_, message, non_retryable=False, details=None):
        super().__init__(message)
        self.type, self.message = type_, message
        self.non_retryable, self.details = non_retryable, details


class Context:
    """One try: its identity, the previous try's last progress, cancellation and heartbeats."""

    def __init__(self, req, emit):
        self.request = req
        self.activity = req.activity
        self.workflow_id, self.run_id, self.step_path = req.workflow_id, req.run_id, req.step_path
        self.activity_execution_id = req.activity_execution_id
        self.activity_attempt_id = req.activity_attempt_id
        self.attempt = req.attempt
        self.deadline = req.deadline_unix_nanos / 1e9 if req.deadline_unix_nanos else None
        self.reason = None
        self._cancelled = threading.Event()
        self._emit = emit
        self._lock = threading.Lock()  # orders heartbeats before the final event
        self._ended = False

    def cancel(self, reason):
        if not self._cancelled.is_set():
            self.reason = reason
            self._cancelled.set()

    def wait(self, seconds):
        """Sleeps up to seconds; returns True if the try was cancelled or its deadline passed."""
        if self.deadline is not None:
            seconds = min(seconds, max(0.0, self.deadline - time.time()))
        if self._cancelled.wait(seconds):
            return True
        if self.deadline is not None and time.time() >= self.deadline:
            self.cancel("deadline")
            return True
        return False

    @property
    def last_progress(self):
        """The progress the previous try last reported, as heartbeat() was given it (decoded from
        the JSON recorded in the workflow's history); None on a first try. Read it to resume
        instead of starting over."""
        raw = self.request.last_progress
        return json.loads(raw) if raw else None

    def check(self):
        """Raises the error that ends a cancelled try."""
        if self.reason == "deadline":
            raise ActivityError("Timeout", "%s: deadline exceeded" % self.activity)
        raise ActivityError("Cancelled", "%s: cancelled by the host" % self.activity)

    def heartbeat(self, progress=None):
        raw = b"" if progress is None else json.dumps(progress).encode()
        self._send(activities_pb2.ExecuteEvent(heartbeat=activities_pb2.Heartbeat(progress=raw)), False)

    def _send(self, event, final):
        """Emits event unless the try has ended: nothing follows its result or error, not even a
        heartbeat from a thread the activity left running."""
        with self._lock:
            if self._ended:
                return
            self._ended = final
            self._emit(event, final)


# The conformance set.
def greet(ctx, inp):
    return {"greeting": "hello, %s" % inp.get("name", "")}


def echo(ctx, inp):
    return inp


def sleep(ctx, inp):
    start = time.time()
    end = start + inp.get("ms", 0) / 1000.0
    while True:
        left = end - time.time()
        if left <= 0:
            return {"slept_ms": int((time.time() - start) * 1000)}
        if ctx.wait(min(0.1, left)):
            ctx.check()
        if time.time() < end:
            ctx.heartbeat({"slept_ms": int((time.time() - start) * 1000)})


def fail(ctx, inp):
    raise ActivityError(inp.get("type", ""), inp.get("message", ""), bool(inp.get("non_retryable")), inp.get("details"))


def record(ctx, inp):
    if not inp.get("path"):
        raise ActivityError("BadInput", "record: path is required", True)
    line = {
        "activity_execution_id": ctx.activity_execution_id,
        "activity_attempt_id": ctx.activity_attempt_id,
        "attempt": ctx.attempt,
        "note": inp.get("note"),
        "pid": os.getpid(),
    }
    fd = os.open(inp["path"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(line, separators=(",", ":")) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return line


def resume(ctx, inp):
    pages, fail_at = inp.get("pages", 0), inp.get("fail_at")
    start = (ctx.last_progress or {}).get("page", 0)
    for page in range(start + 1, pages + 1):
        if page == fail_at and ctx.last_progress is None:
            raise ActivityError("Interrupted", "resume: interrupted before page %d" % page)
        ctx.heartbeat({"page": page})
    return {"resumed_from": start, "pages": pages}


ACTIVITIES = {
    "greet": (greet, "Returns a greeting for name.",
              {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
              {"type": "object", "required": ["greeting"], "properties": {"greeting": {"type": "string"}}}),
    "echo": (echo, "Returns its input unchanged.", {}, {}),
    "sleep": (sleep, "Sleeps ms milliseconds, heartbeating every 100 ms; stops early when cancelled.",
              {"type": "object", "required": ["ms"], "properties": {"ms": {"type": "integer", "minimum": 0}}},
              {"type": "object", "required": ["slept_ms"], "properties": {"slept_ms": {"type": "integer"}}}),
    "fail": (fail, "Fails with the given error.",
             {"type": "object", "properties": {"type": {"type": "string"}, "message": {"type": "string"},
                                               "non_retryable": {"type": "boolean"}}}, {}),
    "record": (record, "Appends one JSON line describing this try to path and fsyncs it.",
               {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "note": {}}},
               {"type": "object"}),
    "resume": (resume, "Does pages 1..pages, heartbeating {page} after each; resumes after the last progress's "
                       "page; a first try fails retryably before page fail_at.",
               {"type": "object", "required": ["pages"],
                "properties": {"pages": {"type": "integer", "minimum": 0}, "fail_at": {"type": "integer"}}},
               {"type": "object", "required": ["resumed_from", "pages"],
                "properties": {"resumed_from": {"type": "integer"}, "pages": {"type": "integer"}}}),
}


def _error_event(e):
    details = b"" if e.details is None else json.dumps(e.details).encode()
    return activities_pb2.ExecuteEvent(error=activities_pb2.Error(
        type=e.type, message=e.message, non_retryable=e.non_retryable, details=details))


class Activities(activities_pb2_grpc.ActivitiesServicer):
    def Describe(self, request, context):
        resp = activities_pb2.DescribeResponse()
        for name in sorted(ACTIVITIES):
            _, desc, ins, outs = ACTIVITIES[name]
            resp.activities.add(name=name, description=desc,
                                input_schema=json.dumps(ins).encode(), output_schema=json.dumps(outs).encode())
        return resp

    # Execute and Lane send their events with grpcio's send callback (the third argument, which
    # grpcio passes to a handler marked experimental_non_blocking, as its own health service's
    # Watch is): the thread that runs a try sends the try's events itself. A handler that
    # returned a generator would instead hand every event to the thread consuming it.

    def Execute(self, request_iterator, context, respond):
        first = next(request_iterator, None)
        if first is None or not first.HasField("request"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "execute: first message must be a request")
        ctx = Context(first.request, lambda event, final: respond(event))
        context.add_callback(lambda: ctx.cancel("cancelled"))  # the stream ended

        def watch_cancel():  # the host's Cancel message
            try:
                for msg in request_iterator:
                    if msg.HasField("cancel"):
                        ctx.cancel(msg.cancel.reason or "cancelled")
            except Exception:  # the stream ended
                ctx.cancel("cancelled")

        threading.Thread(target=watch_cancel, daemon=True).start()
        run_try(ctx)
        respond(None)  # ends the stream

    Execute.experimental_non_blocking = True

    def Lane(self, request_iterator, context, respond):
        """Execute many times over one stream, one try at a time (see activities.proto).

        Two threads take turns reading the host's messages. The one that reads a request runs
        that try itself, sending its events, and hands the reading to the other, which meanwhile
        cancels the try on a cancel message (one that arrives when no try is in flight is
        ignored). So a call wakes no thread but the one grpcio hands the request to. The end of
        the stream cancels the try in flight; when the host closed its send side, the lane ends
        cleanly once that try has sent its final event."""
        sending = threading.Lock()  # one send at a time on the stream
        reading = threading.Lock()  # held by the thread that reads the host's messages
        lock = threading.Lock()
        idle = threading.Event()  # no try in flight
        idle.set()
        lane = {"try": None, "over": False}  # the Context of the try in flight

        def send(event):  # None ends the stream
            with sending:
                respond(event)

        def emit(event, final):
            send(event)
            if final:
                with lock:
                    lane["try"] = None
                idle.set()

        def cancel(reason):
            with lock:
                ctx = lane["try"]
            if ctx is not None:
                ctx.cancel(reason)

        def next_try():
            """Reads the host's messages up to the next request and returns its try; ends the
            stream and returns None when the lane is over."""
            try:
                for msg in request_iterator:
                    kind = msg.WhichOneof("input")
                    if kind == "cancel":
                        cancel(msg.cancel.reason or "cancelled")
                    elif kind == "request":
                        idle.wait()  # the host sent the next request before reading the last result
                        idle.clear()
                        ctx = Context(msg.request, emit)
                        with lock:
                            lane["try"] = ctx
                        return ctx
                cancel("cancelled")  # the host closed the lane
                idle.wait()
            except Exception:  # the stream broke or was cancelled
                cancel("cancelled")
            send(None)
            return None

        def take_turns():
            while True:
                with reading:
                    ctx = None if lane["over"] else next_try()
                    lane["over"] = ctx is None
                if ctx is None:
                    return
                run_try(ctx)  # while the other thread reads on

        context.add_callback(lambda: cancel("cancelled"))  # the stream ended
        for _ in range(2):
            threading.Thread(target=take_turns, daemon=True).start()

    Lane.experimental_non_blocking = True


def run_try(ctx):
    """Runs the try ctx describes on the calling thread: ctx emits the try's heartbeats and then
    exactly one result or error. Execute and Lane share it."""
    req = ctx.request
    if req.activity not in ACTIVITIES:
        ctx._send(_error_event(ActivityError("UnknownActivity", "unknown activity %r (have %s)" % (
            req.activity, json.dumps(sorted(ACTIVITIES))), True)), True)
        return
    if len(req.input) > MAX_PAYLOAD:
        ctx._send(_error_event(ActivityError("PayloadTooLarge", "input of %s is %d bytes, over the %d-byte limit" % (
            req.activity, len(req.input), MAX_PAYLOAD), True)), True)
        return
    _work(ctx)


def _work(ctx):
    """Runs the try's activity and emits its result or error."""
    req = ctx.request
    try:
        inp = json.loads(req.input) if req.input else None
    except ValueError as e:
        ctx._send(_error_event(ActivityError("BadInput", "decode input of %s: %s" % (req.activity, e), True)), True)
        return
    try:
        out = json.dumps(ACTIVITIES[req.activity][0](ctx, inp)).encode()
    except ActivityError as e:
        ctx._send(_error_event(e), True)
        return
    except Exception as e:  # a plain exception is a retryable failure
        ctx._send(_error_event(ActivityError("Error", "%s: %s" % (type(e).__name__, e))), True)
        return
    if len(out) > MAX_PAYLOAD:
        ctx._send(_error_event(ActivityError("PayloadTooLarge", "output of %s is %d bytes, over the %d-byte limit" % (
            req.activity, len(out), MAX_PAYLOAD), True)), True)
    else:
        ctx._send(activities_pb2.ExecuteEvent(result=activities_pb2.Result(output=out)), True)


class Health(health_pb2_grpc.HealthServicer):
    def Check(self, request, context):
        if request.service in ("", "plugin"):
            return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVICE_UNKNOWN)

    def Watch(self, request, context):
        yield self.Check(request, context)
        while context.is_active():  # go-plugin does not watch; keep the stream open like gRPC does
            time.sleep(1)


class Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self, stop):
        self._stop = stop

    def Shutdown(self, request, context):
        threading.Thread(target=self._stop, daemon=True).start()
        return grpc_controller_pb2.Empty()


def watch_parent(ppid):
    """Exit when the host is gone: the parent-death signal covers Linux, this covers the rest."""
    while True:
        if os.getppid() != ppid:
            sys.stderr.write("wend plugin: host process %d is gone; exiting\n" % ppid)
            sys.stderr.flush()
            os._exit(1)
        time.sleep(1)


def main():
    if os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write("This is a wend plugin; wend starts it (see `wend plugin describe`).\n")
        return 1
    versions = os.environ.get("PLUGIN_PROTOCOL_VERSIONS", str(APP_PROTOCOL)).split(",")
    if str(APP_PROTOCOL) not in versions:
        sys.stderr.write("wend plugin: host speaks protocol versions %s, this plugin %d\n" % (versions, APP_PROTOCOL))
        return 1
    host = os.environ.get("WEND_HOST_PID", "")
    threading.Thread(target=watch_parent, args=(int(host) if host.isdigit() else os.getppid(),), daemon=True).start()

    options = [("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64), options=options)
    done = threading.Event()

    def stop():
        server.stop(grace=0.5).wait()
        done.set()

    activities_pb2_grpc.add_ActivitiesServicer_to_server(Activities(), server)
    health_pb2_grpc.add_HealthServicer_to_server(Health(), server)
    grpc_controller_pb2_grpc.add_GRPCControllerServicer_to_server(Controller(stop), server)

    client_cert = os.environ.get("PLUGIN_CLIENT_CERT")
    cert_field = ""
    if client_cert:  # AutoMTLS: trust only the host's certificate, present our own
        cert_pem, key_pem, cert_der = mtls.server_certificate()
        creds = grpc.ssl_server_credentials([(key_pem, cert_pem)], root_certificates=client_cert.encode(),
                                            require_client_auth=True)
        port = server.add_secure_port("127.0.0.1:0", creds)
        cert_field = "|" + mtls.handshake_cert(cert_der)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    sys.stdout.write("1|%d|tcp|127.0.0.1:%d|grpc%s\n" % (APP_PROTOCOL, port, cert_field))
    sys.stdout.flush()
    done.wait()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # do not wait for handler threads a host gave up on


if __name__ == "__main__":
    sys.exit(main())
