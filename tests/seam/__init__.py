"""The one seam between the tests and the code under test.

Tests never import student code. They hold an ``Impl`` and call through it with plain data:

    impl.tensors.view_strides((3, 4), (4, 1), (4, 3))     # -> (3, 1)
    impl.probes.linear_forward(4, 2, weight, x)           # class APIs go through probes.py
    impl.get("adamw_accounting.GPT2_XL")                  # -> Struct("TransformerConfig", {...})

Arguments and results are encoded to JSON (codec.py) and decoded again on the other side, in
this process (``InProcess``: students' own pytest, and the reference inside the grader) or in a
sandboxed worker process (``grader.sandbox.Sandbox``: submissions being graded). Either way a
test sees only built-in values, tensors and ``Struct``s, and exceptions are rebuilt here:
ValueError/IndexError/... by name, anything else as ``SubmissionError``.
"""

from pathlib import Path

import pytest

from . import codec
from .callee import Callee
from .codec import Struct
from .layout import PROBLEMS

# Set by the grader's pytest plugin: the sandboxed submission that the ``impl`` fixture returns.
GRADED_IMPL = pytest.StashKey["Impl"]()

# Exceptions a test may expect from student code, rebuilt by name on the trusted side.
PASSTHROUGH = {e.__name__: e for e in (ValueError, IndexError, TypeError, KeyError,
                                        NotImplementedError, ZeroDivisionError)}


class SubmissionError(Exception):
    """Student code raised something a test does not expect, or returned a bad value."""


class SandboxFailure(Exception):
    """The student process crashed, hung or was killed; the message says how."""


class Impl:
    """An implementation under test. Subclasses decide where the code runs (``_send``)."""

    label = "implementation"

    def __getattr__(self, name):
        if name in PROBLEMS or name == "probes":
            return _Namespace(self, name)
        raise AttributeError(name)

    def call(self, target: str, *args, **kwargs):
        request = {"op": "call", "target": target,
                   "args": codec.to_plain(list(args)), "kwargs": codec.to_plain(kwargs)}
        return self._unwrap(target, self._send(request))

    def map(self, target: str, calls) -> list:
        """``target(*args)`` for each args tuple in ``calls``, in one round trip. Each item is the
        value returned, or the exception raised (rebuilt here, as ``call`` would raise it)."""
        request = {"op": "map", "target": target, "calls": [codec.to_plain(list(a)) for a in calls]}
        response = self._send(request)
        if type(response) is dict and set(response) == {"ok"} and type(response["ok"]) is list \
                and len(response["ok"]) == len(request["calls"]):
            out = []
            for item in response["ok"]:
                try:
                    out.append(self._unwrap(target, item))
                except (SubmissionError, NotImplementedError, *PASSTHROUGH.values()) as e:
                    out.append(e)
            return out
        if type(response) is dict and set(response) == {"raised"}:
            self._unwrap(target, response)  # the whole batch failed: raises what it raised
        raise SubmissionError(f"{target}: malformed response from the implementation")

    def get(self, target: str):
        return self._unwrap(target, self._send({"op": "get", "target": target}))

    def _send(self, request: dict) -> dict:
        raise NotImplementedError

    def _unwrap(self, target: str, response):
        if type(response) is dict and set(response) == {"ok"}:
            try:
                return codec.from_plain(response["ok"])
            except codec.DecodeError as e:
                raise SubmissionError(f"{target} returned data the grader cannot read: {e}") from None
        if type(response) is dict and set(response) == {"raised"} and type(response["raised"]) is dict:
            info = response["raised"]
            kind, msg, where = (str(info.get(k, ""))[:2000] for k in ("type", "message", "where"))
            at = f" ({where})" if where else ""
            if kind == "ModuleUnavailable":
                raise SubmissionError(msg)
            if kind == "NotImplementedError":
                raise NotImplementedError(f"{target} is not implemented yet{at}")
            if kind in PASSTHROUGH:
                raise PASSTHROUGH[kind](f"{msg}{at}")
            if kind == "Unsupported":
                raise SubmissionError(f"{target}: {msg}")
            raise SubmissionError(f"{target} raised {kind}: {msg}{at}")
        raise SubmissionError(f"{target}: malformed response from the implementation")


class _Namespace:
    """``impl.tensors.view_strides(...)`` == ``impl.call("tensors.view_strides", ...)``."""

    def __init__(self, impl: Impl, module: str):
        self._impl, self._module = impl, module

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._impl.call(f"{self._module}.{name}", *args, **kwargs)


class InProcess(Impl):
    """Runs the folder's code in this process; the JSON round trip keeps results plain."""

    def __init__(self, folder: Path, package: str, typecheck: bool = False):
        self.folder = Path(folder)
        self.label = package
        self.callee = Callee(self.folder, package, typecheck=typecheck)

    def _send(self, request: dict) -> dict:
        response = self.callee.handle(codec.loads(codec.dumps(request)))
        return codec.loads(codec.dumps(response))


__all__ = ["Impl", "InProcess", "Struct", "SubmissionError", "SandboxFailure", "PROBLEMS"]
