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
    if isinstance(value, BaseException):  # a call that raised where a value was due
        return f"raised {type(value).__name__}" + (f": {value}" if str(value) else "")
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


def _kind(value) -> str:
    if isinstance(value, torch.Tensor):
        return "tensor"
    return "None" if value is None else type(value).__name__


def _mismatch(got, expected, rtol: float, atol: float, at: str = "") -> str | None:
    """None when ``got`` has the type structure of ``expected`` and equal values (floats within
    rtol/atol; 0, 0 = exact); else where and how they differ, naming both types if those differ.

    The one type rule (the handout states it): a value must be of the promised type. Subclasses
    of built-in types were already turned into the built-in type when they crossed the seam
    (torch.Size -> tuple, Counter -> dict, numpy.int64 -> int); an int is accepted where a float
    is promised (Python's own rule), never a float where an int is, nor a bool for an int."""
    te, where = type(expected), f"at {at}: " if at else ""

    def wrong_type():
        return f"{where}expected {_kind(expected)}, got {_kind(got)} {show(got)}"

    if te is bool or expected is None or te is str or te is int:
        if type(got) is not te:
            return wrong_type()
        return None if got == expected else (f"{where}values differ" if at else "")
    if te is float:
        if type(got) not in (int, float):
            return wrong_type()
        if math.isnan(expected):
            same = math.isnan(got)
        elif rtol == 0 and atol == 0:
            same = got == expected
        else:
            same = math.isclose(got, expected, rel_tol=rtol, abs_tol=atol)
        return None if same else (f"{where}values differ" if at else "")
    if te in (tuple, list):
        if type(got) is not te:
            return wrong_type()
        if len(got) != len(expected):
            return f"{where}expected {len(expected)} items, got {len(got)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            why = _mismatch(g, e, rtol, atol, f"{at}[{i}]")
            if why is not None:
                return why
        return None
    if te is dict:
        if type(got) is not dict:
            return wrong_type()
        if set(got) != set(expected):
            return (f"{where}keys differ: missing {sorted(set(expected) - set(got))}, "
                    f"unexpected {sorted(set(got) - set(expected))}")
        for k in expected:
            why = _mismatch(got[k], expected[k], rtol, atol, f"{at}[{k!r}]")
            if why is not None:
                return why
        return None
    if isinstance(expected, torch.Tensor):
        if type(got) is not torch.Tensor:
            return wrong_type()
        if got.dtype != expected.dtype or got.shape != expected.shape:
            return (f"{where}expected a {expected.dtype} tensor of shape {tuple(expected.shape)}, "
                    f"got {got.dtype} of shape {tuple(got.shape)}")
        return None if tensors_match(got, expected, rtol, atol) else (f"{where}values differ" if at else "")
    if type(got) is not te:
        return wrong_type()
    return None if got == expected else (f"{where}values differ" if at else "")


def _same(got, expected, rtol: float, atol: float) -> bool:
    return _mismatch(got, expected, rtol, atol) is None


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
    why = _mismatch(got, expected, rtol, atol)
    if why is not None:
        tol = f"tolerance: rtol={rtol:g}, atol={atol:g}" if (rtol or atol) else ""
        fail(what, got, expected, "; ".join(s for s in (why, tol, note) if s))


def ended(got) -> str:
    """How a call ended, in the words every bad-input failure uses."""
    return show(got) if isinstance(got, BaseException) else f"returned {show(got)}, no exception"


def expect_error(got, exc: type[BaseException] | str, what: str) -> None:
    """``got`` (a value or an exception, as ``impl.map`` gives them) must be ``exc`` raised."""
    name = exc if isinstance(exc, str) else exc.__name__
    ok = isinstance(got, BaseException) and (type(got).__name__ == name if isinstance(exc, str)
                                              else isinstance(got, exc))
    if not ok:
        pytest.fail(f"{what}\n  expected: raises {name}\n  got:      {ended(got)}", pytrace=False)


EXCEPTION_NAMES = ("ValueError", "IndexError", "TypeError", "KeyError")


def expect_result(got, want, what: str) -> None:
    """``want`` is the value due, or an exception's name ("ValueError") where the call must raise;
    ``got`` is what ``impl.map`` gave (a value or the exception)."""
    if type(want) is str and want in EXCEPTION_NAMES:
        expect_error(got, want, what)
    elif isinstance(got, BaseException):
        pytest.fail(f"{what}\n  expected: {show(want)}\n  got:      {ended(got)}", pytrace=False)
    else:
        expect_equal(got, want, what)


def expect_outcome(got, want: str, what: str) -> None:
    """``want`` is "ok" (the call returns, whatever the value) or an exception's name."""
    if want != "ok":
        expect_error(got, want, what)
    elif isinstance(got, BaseException):
        pytest.fail(f"{what}\n  expected: returns (a valid input)\n  got:      {ended(got)}", pytrace=False)


def expect_raises(exc: type[BaseException], fn, what: str):
    """Fail unless ``fn()`` raises ``exc`` (exactly that family; a crash is not a pass)."""
    try:
        got = fn()
    except exc as e:
        return e
    expect_error(got, exc, what)


def expect_agree(impl, ref, target: str, calls, rtol: float = 0.0) -> None:
    """The submission gives what the reference gives on every call (exact types; floats within
    rtol), or raises the same exception type where the reference raises. One round trip each."""
    got, want = impl.map(target, calls), ref.map(target, calls)
    for args, g, w in zip(calls, got, want):
        what = call_text(target, args)
        if isinstance(w, Exception):
            expect_error(g, type(w).__name__, what)
            continue
        if isinstance(g, Exception):
            pytest.fail(f"{what}\n  expected: {show(w)}\n  got:      {ended(g)}", pytrace=False)
        expect_equal(g, w, what, rtol=rtol)
