"""serve(): the go-plugin side of a wend plugin, and the Activities service over the registry."""

import json
import logging
import os
import sys
import threading
import time
from concurrent import futures

import grpc

from . import _mtls
from .activity import _registry
from .context import Context
from .errors import ActivityError, from_exception
from ._stubs import (activities_pb2, activities_pb2_grpc, grpc_controller_pb2, grpc_controller_pb2_grpc,
                     health_pb2, health_pb2_grpc)

# Must match sdk/go/wire: the magic cookie and the protocol version the host offers.
COOKIE_KEY, COOKIE_VALUE = "WEND_PLUGIN", "wend-activities-v1"
PROTOCOL_VERSION = 1
MAX_PAYLOAD = 2 << 20
MAX_MESSAGE = 16 << 20

log = logging.getLogger("wend_plugin")


def _error_event(e):
    details = b"" if e.details is None else json.dumps(e.details).encode()
    delay_ms = 0 if not e.next_retry_delay else max(int(e.next_retry_delay * 1000), 0)
    return activities_pb2.ExecuteEvent(error=activities_pb2.Error(
        type=e.type, message=e.message, non_retryable=e.non_retryable, details=details,
        next_retry_delay_ms=delay_ms))


def _heartbeat_event(raw):
    return activities_pb2.ExecuteEvent(heartbeat=activities_pb2.Heartbeat(progress=raw))


def _new_context(req, emit):
    return Context(req, emit, _heartbeat_event)


class _Activities(activities_pb2_grpc.ActivitiesServicer):
    def Describe(self, request, context):
        resp = activities_pb2.DescribeResponse()
        for name in sorted(_registry):
            a = _registry[name]
            resp.activities.add(name=name, description=a.description,
                                input_schema=json.dumps(a.input).encode(), output_schema=json.dumps(a.output).encode())
        return resp

    # Execute and Lane send their events with grpcio's send callback (the third argument, which
    # grpcio passes to a handler marked experimental_non_blocking, as its own health service's
    # Watch is): the thread that runs a try sends the try's events itself. A handler that
    # returned a generator would instead hand every event to the thread consuming it.

    def Execute(self, request_iterator, context, respond):
        first = next(request_iterator, None)
        if first is None or not first.HasField("request"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "execute: first message must be a request")
        ctx = _new_context(first.request, lambda event, final: respond(event))
        context.add_callback(lambda: ctx.cancel("cancelled"))  # the stream ended

        def watch_cancel():  # the host's Cancel message
            try:
                for msg in request_iterator:
                    if msg.HasField("cancel"):
                        ctx.cancel(msg.cancel.reason or "cancelled")
            except Exception:  # the stream ended
                ctx.cancel("cancelled")

        threading.Thread(target=watch_cancel, daemon=True).start()
        _run_try(ctx)
        respond(None)  # ends the stream

    Execute.experimental_non_blocking = True

    def Lane(self, request_iterator, context, respond):
        """Execute many times over one stream, one try at a time (see activities.proto).

        Two threads take turns reading the host's messages. The one that reads a request runs
        that try itself, sending its events, and hands the reading to the other, which meanwhile
        cancels the try on a cancel message (one that arrives when no try is in flight is
        ignored). The end of the stream cancels the try in flight; when the host closed its send
        side, the lane ends cleanly once that try has sent its final event."""
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
            try:
                for msg in request_iterator:
                    kind = msg.WhichOneof("input")
                    if kind == "cancel":
                        cancel(msg.cancel.reason or "cancelled")
                    elif kind == "request":
                        idle.wait()  # the host sent the next request before reading the last result
                        idle.clear()
                        ctx = _new_context(msg.request, emit)
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
                _run_try(ctx)  # while the other thread reads on

        context.add_callback(lambda: cancel("cancelled"))  # the stream ended
        for _ in range(2):
            threading.Thread(target=take_turns, daemon=True).start()

    Lane.experimental_non_blocking = True


def _fail(ctx, type_, message):
    ctx._send(_error_event(ActivityError(message, type_, True)), True)


def _run_try(ctx):
    """Runs the try ctx describes on the calling thread: ctx emits the try's heartbeats and then
    exactly one result or error. Execute and Lane share it."""
    req = ctx.request
    a = _registry.get(req.activity)
    if a is None:
        return _fail(ctx, "UnknownActivity", "unknown activity %r (have %s)" % (req.activity, json.dumps(sorted(_registry))))
    if len(req.input) > MAX_PAYLOAD:
        return _fail(ctx, "PayloadTooLarge", "input of %s is %d bytes, over the %d-byte limit" % (
            req.activity, len(req.input), MAX_PAYLOAD))
    try:
        inp = json.loads(req.input) if req.input else None
    except ValueError as e:
        return _fail(ctx, "BadInput", "decode input of %s: %s" % (req.activity, e))
    try:
        out = json.dumps(a.fn(ctx, inp)).encode()
    except ActivityError as e:
        ctx._send(_error_event(e), True)
        return
    except Exception as e:  # a plain exception is a retryable failure, typed by its class
        log.exception("activity %s (attempt %d) failed: run=%s step=%s", req.activity, req.attempt, req.run_id, req.step_path)
        ctx._send(_error_event(from_exception(e)), True)
        return
    if len(out) > MAX_PAYLOAD:
        return _fail(ctx, "PayloadTooLarge", "output of %s is %d bytes, over the %d-byte limit" % (
            req.activity, len(out), MAX_PAYLOAD))
    ctx._send(activities_pb2.ExecuteEvent(result=activities_pb2.Result(output=out)), True)


class _Health(health_pb2_grpc.HealthServicer):
    def Check(self, request, context):
        if request.service in ("", "plugin"):
            return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVICE_UNKNOWN)

    def Watch(self, request, context):
        yield self.Check(request, context)
        while context.is_active():  # go-plugin does not watch; keep the stream open like gRPC does
            time.sleep(1)


class _Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self, stop):
        self._stop = stop

    def Shutdown(self, request, context):
        threading.Thread(target=self._stop, daemon=True).start()
        return grpc_controller_pb2.Empty()


def _watch_parent(ppid):
    """Exit when the host is gone: the parent-death signal covers Linux, this covers the rest."""
    while True:
        if os.getppid() != ppid:
            sys.stderr.write("wend plugin: host process %d is gone; exiting\n" % ppid)
            sys.stderr.flush()
            os._exit(1)
        time.sleep(1)


def check_handshake(environ):
    """Returns None when wend started this process with a protocol this SDK speaks, else the
    message to print before exiting."""
    cookie = environ.get(COOKIE_KEY)
    if cookie is None:
        return "This is a wend plugin; wend starts it (see `wend plugin describe`)."
    versions = [v.strip() for v in environ.get("PLUGIN_PROTOCOL_VERSIONS", str(PROTOCOL_VERSION)).split(",")]
    if cookie != COOKIE_VALUE or str(PROTOCOL_VERSION) not in versions:
        return ("wend plugin: protocol mismatch: this wend offers plugin protocol %s (cookie %s), "
                "wend_plugin %s speaks protocol %d (cookie %s); install the wend_plugin released with "
                "your wend (pip install --upgrade wend-plugin, or pip install <wend checkout>/sdk/python)"
                % (",".join(versions), cookie, _sdk_version(), PROTOCOL_VERSION, COOKIE_VALUE))
    return None


def _sdk_version():
    from . import __version__
    return __version__


def serve():
    """Serves the registered activities to the wend that started this process, until it stops
    the plugin or exits. Never returns."""
    problem = check_handshake(os.environ)
    if problem:
        sys.stderr.write(problem + "\n")
        sys.exit(1)
    if not logging.getLogger().handlers:  # stderr is wend's log of this plugin
        logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    host = os.environ.get("WEND_HOST_PID", "")
    threading.Thread(target=_watch_parent, args=(int(host) if host.isdigit() else os.getppid(),), daemon=True).start()

    options = [("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64), options=options)
    done = threading.Event()

    def stop():
        server.stop(grace=0.5).wait()
        done.set()

    activities_pb2_grpc.add_ActivitiesServicer_to_server(_Activities(), server)
    health_pb2_grpc.add_HealthServicer_to_server(_Health(), server)
    grpc_controller_pb2_grpc.add_GRPCControllerServicer_to_server(_Controller(stop), server)

    client_cert = os.environ.get("PLUGIN_CLIENT_CERT")
    cert_field = ""
    if client_cert:  # AutoMTLS: trust only the host's certificate, present our own
        cert_pem, key_pem, cert_der = _mtls.server_certificate()
        creds = grpc.ssl_server_credentials([(key_pem, cert_pem)], root_certificates=client_cert.encode(),
                                            require_client_auth=True)
        port = server.add_secure_port("127.0.0.1:0", creds)
        cert_field = "|" + _mtls.handshake_cert(cert_der)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    sys.stdout.write("1|%d|tcp|127.0.0.1:%d|grpc%s\n" % (PROTOCOL_VERSION, port, cert_field))
    sys.stdout.flush()
    sys.stdout = sys.stderr  # after the handshake line, print() goes to wend's log too
    done.wait()
    sys.stderr.flush()
    os._exit(0)  # do not wait for handler threads a host gave up on
