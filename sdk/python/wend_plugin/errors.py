"""The errors an activity raises to fail a try with a type (as Temporal's ApplicationError)."""


class ActivityError(Exception):
    """A typed activity failure. wend records type, message and details in the workflow's history;
    a retry policy's non_retryable list matches on type. non_retryable=True fails the activity
    whatever its retry policy. next_retry_delay (seconds), when given, is the wait before the
    next try instead of the step's backoff, as a server's Retry-After asks."""

    def __init__(self, message, type="Error", non_retryable=False, details=None, next_retry_delay=None):
        super().__init__(message)
        self.type, self.message = type, message
        self.non_retryable, self.details = non_retryable, details
        self.next_retry_delay = next_retry_delay


class RetryableError(ActivityError):
    """A failure the host retries under the step's retry policy; next_retry_delay (seconds)
    replaces the step's backoff before the next try."""

    def __init__(self, message, type="Error", details=None, next_retry_delay=None):
        super().__init__(message, type, False, details, next_retry_delay)


class NonRetryable(ActivityError):
    """A failure no retry can fix (bad input, a missing record): the activity fails at once."""

    def __init__(self, message, type="NonRetryable", details=None):
        super().__init__(message, type, True, details)


class CancelledError(ActivityError):
    """Raised by ctx.heartbeat() and ctx.sleep() once the host cancelled the try or its deadline
    passed. Let it propagate: the try ends and wend records why."""

    def __init__(self, activity, reason):
        if reason == "deadline":
            super().__init__("%s: deadline exceeded" % activity, "Timeout")
        else:
            super().__init__("%s: cancelled by the host (%s)" % (activity, reason), "Cancelled")
        self.reason = reason


def from_exception(e):
    """The ActivityError of a plain exception an activity raised: retryable, typed by its class,
    with the exception's own text as the message (the type is not repeated in it, or wend would
    show "RuntimeError: RuntimeError: ..."); a message-less exception's message is its class."""
    typ = type(e).__name__
    return ActivityError(str(e) or typ, typ)
