"""wend_plugin: write wend activities in Python.

    from wend_plugin import activity, serve, NonRetryable

    @activity(input={"type": "object", "required": ["email"]})
    def send_reminder(ctx, input):
        ctx.heartbeat({"sent": 0})
        return {"sent": True}

    serve()

serve() does what go-plugin does for a Go plugin: the handshake (with the protocol version
check), AutoMTLS, the health and controller services, and the Execute and Lane streams of the
wend.plugin.v1.Activities service.
"""

from .activity import activity
from .context import Context
from .errors import ActivityError, CancelledError, NonRetryable, RetryableError
from .server import PROTOCOL_VERSION, serve

__version__ = "0.1.0"
__all__ = ["activity", "serve", "Context", "ActivityError", "RetryableError", "NonRetryable",
           "CancelledError", "PROTOCOL_VERSION"]
