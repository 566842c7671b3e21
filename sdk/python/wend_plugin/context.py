"""Context: one try of an activity, as the host described it."""

import json
import logging
import threading
import time

from .errors import CancelledError


class _TryLog(logging.LoggerAdapter):
    """A logger whose lines start with the try's run and step: "run=RUN step=STEP: message"."""

    def __init__(self, logger, run_id, step_path):
        super().__init__(logger, {"run_id": run_id, "step_path": step_path})
        self.prefix = "run=%s step=%s: " % (run_id, step_path)

    def process(self, msg, kwargs):
        return self.prefix + str(msg), kwargs


class Context:
    """One try: its identity, the previous try's last progress, heartbeats and cancellation.

    Attributes: activity, workflow_id, run_id, step_path, activity_execution_id (the same for
    every try of a step: an idempotency key), activity_attempt_id, attempt (1 on the first try),
    deadline (seconds since the epoch, or None), traceparent (the try's W3C trace context,
    "00-<trace id>-<span id>-<flags>": the run's trace and the try's span, for the plugin's own
    spans to join; "" when the run has none), log (a logger whose lines wend shows)."""

    def __init__(self, req, emit, heartbeat_event):
        self.request = req
        self.activity = req.activity
        self.workflow_id, self.run_id, self.step_path = req.workflow_id, req.run_id, req.step_path
        self.activity_execution_id = req.activity_execution_id
        self.activity_attempt_id = req.activity_attempt_id
        self.attempt = req.attempt
        self.traceparent = req.traceparent
        self.deadline = req.deadline_unix_nanos / 1e9 if req.deadline_unix_nanos else None
        self.reason = None
        # Its lines name the try's run and step: one plugin process serves many runs at once.
        self.log = _TryLog(logging.getLogger("wend_plugin.activity." + req.activity), req.run_id, req.step_path)
        self._cancelled = threading.Event()
        self._emit = emit
        self._heartbeat_event = heartbeat_event
        self._lock = threading.Lock()  # orders heartbeats before the final event
        self._ended = False

    def cancel(self, reason):
        if not self._cancelled.is_set():
            self.reason = reason
            self._cancelled.set()

    @property
    def cancelled(self):
        """True once the host cancelled the try or its deadline passed."""
        if not self._cancelled.is_set() and self.deadline is not None and time.time() >= self.deadline:
            self.cancel("deadline")
        return self._cancelled.is_set()

    def wait(self, seconds):
        """Sleeps up to seconds; returns True early if the try was cancelled or its deadline passed."""
        if self.deadline is not None:
            seconds = min(seconds, max(0.0, self.deadline - time.time()))
        if self._cancelled.wait(seconds):
            return True
        return self.cancelled

    def sleep(self, seconds):
        """Sleeps seconds; raises CancelledError as soon as the try is cancelled."""
        if self.wait(seconds):
            self.raise_if_cancelled()

    def raise_if_cancelled(self):
        """Raises CancelledError if the try was cancelled or its deadline passed."""
        if self.cancelled:
            raise CancelledError(self.activity, self.reason)

    @property
    def last_progress(self):
        """The progress the previous try last reported, as heartbeat() was given it; None on a
        first try. Read it to resume instead of starting over."""
        raw = self.request.last_progress
        return json.loads(raw) if raw else None

    def heartbeat(self, progress=None):
        """Tells the host the try is alive (resetting its heartbeat timeout) and records progress
        (any JSON value) for the next try's last_progress. Raises CancelledError if the try was
        cancelled: the next heartbeat is where a long activity stops."""
        self.raise_if_cancelled()
        raw = b"" if progress is None else json.dumps(progress).encode()
        self._send(self._heartbeat_event(raw), False)

    def _send(self, event, final):
        """Emits event unless the try has ended: nothing follows its result or error, not even a
        heartbeat from a thread the activity left running."""
        with self._lock:
            if self._ended:
                return
            self._ended = final
            self._emit(event, final)
