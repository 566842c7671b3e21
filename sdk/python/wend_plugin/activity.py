"""The @activity decorator and the registry serve() exposes."""

import inspect

_registry = {}


class Activity:
    def __init__(self, fn, name, description, input, output):
        self.fn, self.name, self.description = fn, name, description
        self.input, self.output = input, output


# JSON Schema types of the plain type hints, for schemas derived from a signature.
_HINTS = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def _hint_schema(hint):
    if hint in _HINTS:
        return {"type": _HINTS[hint]}
    return {}


def activity(fn=None, *, name=None, description=None, input=None, output=None):
    """Registers fn(ctx, input) as an activity that serve() exposes.

    name defaults to the function's name, description to its docstring's first line. input and
    output are JSON Schemas wend checks workflows and data against; without them a plain type hint
    (dict, str, int, float, bool, list) on the input parameter or the return gives the schema.
    Usable bare (@activity) or with arguments."""

    def register(f):
        sig = inspect.signature(f)
        params = list(sig.parameters.values())
        ins, outs = input, output
        if ins is None:
            ins = _hint_schema(params[1].annotation) if len(params) > 1 else {}
        if outs is None:
            outs = _hint_schema(sig.return_annotation)
        doc = (inspect.getdoc(f) or "").strip().split("\n")[0]
        n = name or f.__name__
        if n in _registry:
            raise ValueError("wend_plugin: activity %r registered twice" % n)
        _registry[n] = Activity(f, n, description if description is not None else doc, ins, outs)
        return f

    return register(fn) if fn is not None else register
