"""Comparisons for tests: strict about types, readable when they fail (got / expected).

Values reaching a test have crossed the seam, so they are built-in values or real tensors; these
helpers still check the type first, so a float where an int is due, a list where a tuple is due,
or a bool where an int is due fails with a message that says so.
"""

import math

import pytest
import torch

MAX_REPR = 300


def show(value) -> str:
    if isinstance(value, torch.Tensor):
        body = repr(value.detach().flatten()[:8].tolist())
        return f"tensor(dtype={value.dtype}, shape={tuple(value.shape)}, first={body})"
    text = repr(value)
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def call_text(name: str, args=(), kwargs=None) -> str:
    parts = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


def fail(what: str, got, expected, note: str = "") -> None:
    extra = f"\n  {note}" if note else ""
    pytest.fail(f"{what}\n  expected: {show(expected)}\n  got:      {show(got)}{extra}", pytrace=False)


def _same(got, expected, rtol: float, atol: float) -> bool:
    """Structural equality with exact types; floats within rtol/atol (0, 0 = exact)."""
    te = type(expected)
    if te is bool or expected is None or te is str:
        return type(got) is te and got == expected
    if te is int:
        return type(got) is int and got == expected
    if te is float:
        if type(got) not in (int, float):
            return False
        if math.isnan(expected):
            return math.isnan(got)
        if rtol == 0 and atol == 0:
            return got == expected
        return math.isclose(got, expected, rel_tol=rtol, abs_tol=atol)
    if te in (tuple, list):
        return type(got) is te and len(got) == len(expected) and all(
            _same(g, e, rtol, atol) for g, e in zip(got, expected))
    if te is dict:
        return type(got) is dict and set(got) == set(expected) and all(
            _same(got[k], expected[k], rtol, atol) for k in expected)
    if isinstance(expected, torch.Tensor):
        return tensors_match(got, expected, rtol, atol)
    return type(got) is te and got == expected


def tensors_match(got, expected: torch.Tensor, rtol: float = 0.0, atol: float = 0.0) -> bool:
    if type(got) is not torch.Tensor or got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if rtol == 0 and atol == 0:  # bit for bit (NaN payloads and signed zeros included)
        if expected.is_floating_point():
            return bool(torch.equal(got.reshape(-1).view(torch.uint8),
                                    expected.reshape(-1).view(torch.uint8)))
        return bool(torch.equal(got, expected))
    return bool(torch.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


def expect_equal(got, expected, what: str, rtol: float = 0.0, atol: float = 0.0, note: str = ""):
    """Fail unless ``got`` has exactly the type structure of ``expected`` and equal values."""
    if not _same(got, expected, rtol, atol):
        tol = f"tolerance: rtol={rtol:g}, atol={atol:g}" if (rtol or atol) else ""
        fail(what, got, expected, "; ".join(s for s in (tol, note) if s))


def expect_raises(exc: type[BaseException], fn, what: str):
    """Fail unless ``fn()`` raises ``exc`` (exactly that family; a crash is not a pass)."""
    try:
        got = fn()
    except exc as e:
        return e
    pytest.fail(f"{what}\n  expected: {exc.__name__}\n  got:      {show(got)} (no exception)",
                pytrace=False)


def outcome(got):
    """What a call did, for bad-input checks: "ValueError", another exception with its message,
    or the value it returned (``impl.map`` gives exceptions as values)."""
    if isinstance(got, ValueError):
        return "ValueError"
    return f"{type(got).__name__}: {got}" if isinstance(got, Exception) else got


def expect_agree(impl, ref, target: str, calls, rtol: float = 0.0) -> None:
    """The submission gives what the reference gives on every call (exact types; floats within
    rtol), or raises the same exception type where the reference raises. One round trip each."""
    got, want = impl.map(target, calls), ref.map(target, calls)
    for args, g, w in zip(calls, got, want):
        what = call_text(target, args)
        if isinstance(w, Exception):
            expect_equal(type(g).__name__, type(w).__name__, what)
            continue
        if isinstance(g, Exception):
            expect_equal(f"{type(g).__name__}: {g}", w, what)
        expect_equal(g, w, what, rtol=rtol)
