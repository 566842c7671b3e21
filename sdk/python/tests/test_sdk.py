"""Unit tests of wend_plugin's pure parts: the handshake check, the registry, the errors.
Run: python3 -m unittest discover sdk/python/tests (scripts/sdk-check runs them)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from wend_plugin import CancelledError, NonRetryable, RetryableError, activity  # noqa: E402
from wend_plugin.activity import _registry  # noqa: E402
from wend_plugin.server import check_handshake  # noqa: E402


class HandshakeTest(unittest.TestCase):
    def test_cases(self):
        cases = [
            ("started by hand", {}, "This is a wend plugin"),
            ("matching", {"WEND_PLUGIN": "wend-activities-v1", "PLUGIN_PROTOCOL_VERSIONS": "1"}, None),
            ("several offered", {"WEND_PLUGIN": "wend-activities-v1", "PLUGIN_PROTOCOL_VERSIONS": "2, 1"}, None),
            ("newer wend", {"WEND_PLUGIN": "wend-activities-v1", "PLUGIN_PROTOCOL_VERSIONS": "2"},
             "protocol mismatch: this wend offers plugin protocol 2"),
            ("other cookie", {"WEND_PLUGIN": "wend-activities-v2", "PLUGIN_PROTOCOL_VERSIONS": "1"},
             "(cookie wend-activities-v2)"),
        ]
        for name, env, want in cases:
            with self.subTest(name):
                got = check_handshake(env)
                if want is None:
                    self.assertIsNone(got)
                else:
                    self.assertIn(want, got)


class ActivityTest(unittest.TestCase):
    def test_schemas_from_hints_and_docstring(self):
        @activity
        def hinted(ctx, input: dict) -> str:
            """Says something.

            More text."""

        a = _registry.pop("hinted")
        self.assertEqual(a.input, {"type": "object"})
        self.assertEqual(a.output, {"type": "string"})
        self.assertEqual(a.description, "Says something.")

    def test_declared_schemas_win(self):
        @activity(name="x", input={"type": "object", "required": ["email"]}, output={})
        def declared(ctx, input: str):
            pass

        a = _registry.pop("x")
        self.assertEqual(a.input, {"type": "object", "required": ["email"]})

    def test_twice_is_an_error(self):
        activity(name="dup")(lambda ctx, i: i)
        try:
            with self.assertRaises(ValueError):
                activity(name="dup")(lambda ctx, i: i)
        finally:
            _registry.pop("dup")


class ErrorsTest(unittest.TestCase):
    def test_types(self):
        cases = [
            (NonRetryable("m", type="BadEmail"), "BadEmail", True),
            (NonRetryable("m"), "NonRetryable", True),
            (RetryableError("m", type="Busy"), "Busy", False),
            (CancelledError("a", "deadline"), "Timeout", False),
            (CancelledError("a", "cancelled"), "Cancelled", False),
        ]
        for err, typ, non_retryable in cases:
            with self.subTest(typ):
                self.assertEqual((err.type, err.non_retryable), (typ, non_retryable))

    def test_plain_exception_says_its_type_once(self):
        from wend_plugin.errors import from_exception
        cases = [
            (RuntimeError("gateway down"), "RuntimeError", "gateway down"),
            (KeyError("API_TOKEN"), "KeyError", "'API_TOKEN'"),
            (ValueError(), "ValueError", "ValueError"),
        ]
        for exc, typ, message in cases:
            with self.subTest(typ):
                err = from_exception(exc)
                self.assertEqual((err.type, err.message, err.non_retryable), (typ, message, False))

    def test_next_retry_delay_crosses_the_protocol(self):
        from wend_plugin.server import _error_event
        cases = [
            (RetryableError("m", type="Busy", next_retry_delay=7), 7000),
            (RetryableError("m", type="Busy", next_retry_delay=0.25), 250),
            (RetryableError("m", type="Busy"), 0),
            (NonRetryable("m"), 0),
        ]
        for err, ms in cases:
            with self.subTest(ms):
                self.assertEqual(_error_event(err).error.next_retry_delay_ms, ms)


class ContextTest(unittest.TestCase):
    def test_log_names_run_and_step(self):
        import types
        from wend_plugin.context import Context
        lines = []
        for run in ("r1", "r2"):
            req = types.SimpleNamespace(activity="greet", workflow_id="w", run_id=run, step_path="steps[0]",
                                        activity_execution_id="x", activity_attempt_id="y", attempt=1,
                                        traceparent="", deadline_unix_nanos=0)
            with self.assertLogs("wend_plugin.activity.greet") as got:
                Context(req, None, None).log.info("sending %s", "mail")
            lines += [r.getMessage() for r in got.records]
        self.assertEqual(lines, ["run=r1 step=steps[0]: sending mail", "run=r2 step=steps[0]: sending mail"])

    def test_traceparent(self):
        from wend_plugin._stubs import activities_pb2
        from wend_plugin.context import Context
        tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        for name, given in (("given", tp), ("none", "")):
            with self.subTest(name):
                req = activities_pb2.ExecuteRequest(activity="a", attempt=1, traceparent=given)
                self.assertEqual(Context(req, None, None).traceparent, given)


if __name__ == "__main__":
    unittest.main()
