"""Checks for tests: one helper for cases (``check_cases``), and the comparisons under it, strict
about types and readable when they fail (got / expected).

A hidden test is a table of cases, run through one helper:

    check_cases(impl, "tensors.view_strides", [case((3, 4), (4, 1), (4, 3)), ...],
                ref=ref, oracle=torch_view)

``check_cases`` makes every call of the submission in one round trip, decides what each call is
due (the case's own ``want``, else the oracle's answer, else the reference's), checks that the
reference agrees with the oracle (if not, the test itself is wrong), and fails on the first call
whose answer differs, naming the call. A due exception is written ``raises("ValueError")``.

Values reaching a test have crossed the seam, so they are built-in values or real tensors; the
comparisons still check the type first, so a float where an int is due, a list where a tuple is
due, or a bool where an int is due fails with a message that says so.
"""

import dataclasses
import math
from typing import Any, Callable

import pytest
import torch

from seam import PASSTHROUGH
from seam.problems import section

MAX_REPR = 300

# ---- tolerances --------------------------------------------------------------------------------
# A comparison within a tolerance states it in its failure message ("tolerance: rtol=..., atol=...",
# added by expect_equal; the custom comparisons print their own). The two shared by many problems
# are here, with why; a problem's own (AdamW trajectories, float32 and bf16 sums, statistical bands)
# is a named constant beside the tests that use it, with its reason. No test writes a bare number
# as a tolerance (tests/self/repo/test_one_place.py checks).
#
# ROUNDING, rtol 1e-12: a float64 closed form of a few operations (FLOPs, intensities, seconds, MFU,
# bytes). Two correct orders of evaluation differ by a few ulps (2.2e-16 each), under 1e-14 relative
# for these formulas: 1e-12 leaves a factor of 100 for correct code, while every slip (a wrong term,
# a wrong constant, an operator swapped) moves the answer by 1e-6 relative or far more.
ROUNDING = dict(rtol=1e-12)
# CONDITIONED, rtol 1e-9: results that go through pow / exp / log (scaling laws), or through huge
# exact integers converted to float at different points (training days from ~1e25 FLOPs), and the
# public snapshots of every float function. x ** a turns one ulp of x into |a| ulps and exp/log of
# values near 60 lose another factor of 60: correct code stays within ~1e-13, so 1e-9 leaves 1e4.
CONDITIONED = dict(rtol=1e-9)
# EXACT: bit for bit. Integers and bools, values rounded into a number format, seeded tensors that
# are copied or indexed, never computed: any difference at all is a wrong answer.
EXACT = dict(rtol=0.0)

# benchmarks/margins.py: called with each toleranced comparison's deviation, as a multiple of its
# tolerance (1.0: at the edge; over 1: it fails), and the tolerance. None in every grade.
observer: Callable[[float, float, float], None] | None = None


def within(got: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float, equal_nan: bool = False) -> bool:
    """``torch.allclose`` (|got - expected| <= atol + rtol·|expected|): every toleranced tensor
    comparison of the tests, so that margins.py sees how close each one runs."""
    if observer is not None:
        observer(_tensor_ratio(got, expected, rtol, atol, equal_nan), rtol, atol)
    return bool(torch.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _tensor_ratio(got, expected, rtol: float, atol: float, equal_nan: bool) -> float:
    if got.shape != expected.shape or got.numel() == 0:
        return 0.0 if got.shape == expected.shape else math.inf
    g, e = got.detach().cpu().to(torch.float64), expected.detach().cpu().to(torch.float64)
    same = (g == e) | ((g.isnan() & e.isnan()) if equal_nan else torch.zeros_like(g, dtype=torch.bool))
    ratio = ((g - e).abs() / (atol + rtol * e.abs())).nan_to_num(nan=math.inf)
    return float(torch.where(same, 0.0, ratio).max())


def _float_ratio(got: float, expected: float, rtol: float, atol: float) -> float:
    """math.isclose's criterion: |got - expected| <= max(rtol·max(|got|, |expected|), atol)."""
    if got == expected:
        return 0.0
    bound = max(rtol * max(abs(got), abs(expected)), atol)
    diff = abs(got - expected)
    return diff / bound if bound > 0 and math.isfinite(diff) else math.inf


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


def mismatch(got, expected, rtol: float = 0.0, atol: float = 0.0, at: str = "") -> str | None:
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
            if observer is not None:
                observer(_float_ratio(float(got), expected, rtol, atol), rtol, atol)
        return None if same else (f"{where}values differ" if at else "")
    if te in (tuple, list):
        if type(got) is not te:
            return wrong_type()
        if len(got) != len(expected):
            return f"{where}expected {len(expected)} items, got {len(got)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            why = mismatch(g, e, rtol, atol, f"{at}[{i}]")
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
            why = mismatch(got[k], expected[k], rtol, atol, f"{at}[{k!r}]")
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


def tensors_match(got, expected: torch.Tensor, rtol: float = 0.0, atol: float = 0.0) -> bool:
    if type(got) is not torch.Tensor or got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if rtol == 0 and atol == 0:  # bit for bit (NaN payloads and signed zeros included)
        if expected.is_floating_point():
            return bool(torch.equal(got.reshape(-1).view(torch.uint8),
                                    expected.reshape(-1).view(torch.uint8)))
        return bool(torch.equal(got, expected))
    return within(got, expected, rtol, atol, equal_nan=True)


def _inexact(expected) -> bool:
    """Whether a tolerance applies anywhere in ``expected`` (a float or a floating tensor in it):
    ints, bools and strings are always compared exactly, so no tolerance is claimed for them."""
    if isinstance(expected, float):
        return True
    if isinstance(expected, torch.Tensor):
        return expected.is_floating_point() or expected.is_complex()
    if isinstance(expected, dict):
        return any(_inexact(v) for v in expected.values())
    if isinstance(expected, (list, tuple)):
        return any(_inexact(v) for v in expected)
    return False


def expect_equal(got, expected, what: str, rtol: float = 0.0, atol: float = 0.0, note: str = ""):
    """Fail unless ``got`` has exactly the type structure of ``expected`` and equal values."""
    why = mismatch(got, expected, rtol, atol)
    if why is not None:
        tol = f"tolerance: rtol={rtol:g}, atol={atol:g}" if (rtol or atol) and _inexact(expected) else ""
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


def expect_raises(exc: type[BaseException], fn, what: str):
    """Fail unless ``fn()`` raises ``exc`` (exactly that family; a crash is not a pass)."""
    try:
        got = fn()
    except exc as e:
        return e
    expect_error(got, exc, what)


@dataclasses.dataclass(frozen=True)
class Raises:
    """What a case is due when the call must raise: the exception's name ("ValueError")."""
    name: str

    def __repr__(self) -> str:
        return f"raises {self.name}"


def raises(exc: type[BaseException] | str) -> Raises:
    return Raises(exc if isinstance(exc, str) else exc.__name__)


@dataclasses.dataclass(frozen=True)
class Returns:
    """What a case is due when a valid input must simply return: any value, or one of type
    ``kind`` (exactly that type) when given."""
    kind: type | None = None

    def __repr__(self) -> str:
        return "returns (a valid input)" + (f", a {self.kind.__name__}" if self.kind else "")


def returns(kind: type | None = None) -> Returns:
    return Returns(kind)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()  # a case without its own ``want``: the oracle or the reference says what is due


@dataclasses.dataclass(frozen=True)
class Case:
    """One call of the target: its arguments, and what it is due (``want``: a value or
    ``raises(...)``; unset: the oracle's answer, else the reference's). ``what`` names the call in
    a failure (default: the call itself, ``target(args)``)."""
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    want: Any = UNSET
    what: str = ""


def case(*args, want: Any = UNSET, what: str = "", **kwargs) -> Case:
    """``case(2, 3, want=6)``; keyword arguments of the call are keywords here too."""
    return Case(args, kwargs, want, what)


def _answer(fn: Callable, c: Case):
    """What ``fn`` gives for the case: its value, or raises(name) for an exception a test may expect."""
    try:
        return fn(*c.args, **c.kwargs)
    except tuple(PASSTHROUGH.values()) as e:
        return raises(type(e))


def _from_map(value):
    return raises(type(value)) if isinstance(value, Exception) else value


# The mistakes the running test's failure names, in order (each ``Mistake.hint`` adds itself): the
# grader's plugin clears it before each test and keeps it with a failed test's outcome.
NAMED: list = []


@dataclasses.dataclass(frozen=True)
class Mistake:
    """A named misconception, for feedback that teaches. ``answer(*args, **kwargs)`` is what a
    submission that makes this mistake gives for a case (computed here, like an oracle); when a
    call's every wrong answer is the mistake's (by the same comparison, within the same
    tolerance), the failure message names it, says why it is one and where the handout says so.
    A mistake that a structural check recognises (a missing synchronize, gradients not cleared)
    has no ``answer``: that check appends ``hint()`` to its own message."""
    name: str       # "a two-matrix FFN", as a student would recognise it
    answer: Callable | None
    why: str        # one or two sentences: what the right reading is
    handout: str    # the problem whose handout section says it: assignment/problems/<handout>.md
    quote: str      # words of that section, verbatim (tests/self/unit/test_mistakes.py checks they are there)

    def hint(self) -> str:
        """The failure's paragraph about it; also noted in ``NAMED`` (results.json's
        ``extra_data.mistakes``): call it only for a failure it explains."""
        NAMED.append(self)
        return (f"\n  This looks like a known mistake: {self.name}. {self.why}"
                f"\n  See {section(self.handout)}: \"{self.quote}\"")


def _same(same: Callable, got, expected) -> bool:
    """Whether the comparison ``same`` accepts ``got`` as ``expected`` (an exception never is)."""
    if isinstance(got, BaseException):
        return False
    try:
        same(got, expected, "")
        return True
    except pytest.fail.Exception:
        return False


def diagnose(mistakes, cases: list["Case"], got: list, dues: list, same: Callable) -> str:
    """The hints of the mistakes that explain every wrong answer of this call: on each case whose
    answer differs from what it is due, the submission gave what the mistake gives (a mistake
    may be partial: right answers are not held against it). One wrong answer can fit two
    mistakes (GPT-2 XL's max batch 3 fits a two-matrix FFN and a GiB budget): both are named
    then. "" if none fits."""
    wrong = [(c, g) for c, g, due in zip(cases, got, dues)
             if not isinstance(due, (Raises, Returns)) and not _same(same, g, due)]
    fits = []
    for m in mistakes:
        if m.answer is None or not wrong:
            continue
        try:
            if all(_same(same, g, m.answer(*c.args, **c.kwargs)) for c, g in wrong):
                fits.append(m)
        except Exception:  # the mistake's formula does not apply to a wrong case: it does not explain it
            continue
    return "".join(m.hint() for m in fits)


def _due(c: Case, r, oracle: Callable | None):
    """What case ``c`` is due: its own want, else the oracle's answer, else the reference's ``r``."""
    return c.want if c.want is not UNSET else _answer(oracle, c) if oracle is not None else r


def check_cases(impl, target: str, cases, *, ref=None, oracle: Callable | None = None,
                rtol: float = 0.0, atol: float = 0.0, note: str = "",
                compare: Callable | None = None, mistakes=()) -> list:
    """Every case of ``target`` on ``impl`` (one round trip), against what each case is due.

    Due: the case's ``want``; else ``oracle(*args, **kwargs)`` (PyTorch, or a count made here);
    else the reference's answer (``ref``). With ``ref`` and another source both present, the
    reference must agree with that source first: an AssertionError then says the test is wrong,
    not the student. Values are compared by ``expect_equal`` (exact types; floats within
    rtol/atol, stated in the message) or by ``compare(got, due, what)``; a due exception must be
    raised by name. ``mistakes``: named misconceptions (``Mistake``) a wrong answer is matched
    against, to say which one it looks like. Returns what the submission gave."""
    cases = [c if isinstance(c, Case) else Case(tuple(c)) for c in cases]
    calls, kwargs = [c.args for c in cases], [c.kwargs for c in cases]
    got = impl.map(target, calls, kwargs)
    refs = [_from_map(v) for v in ref.map(target, calls, kwargs)] if ref is not None else [UNSET] * len(cases)
    same = compare or (lambda g, d, what: expect_equal(g, d, what, rtol=rtol, atol=atol, note=note))
    dues = []
    for c, g, r in zip(cases, got, refs):
        if getattr(g, "not_implemented", ""):
            raise g  # a stub's to-do, not a wrong answer: the student's run lists it as not implemented
        what = c.what or call_text(target, c.args, c.kwargs)
        due = _due(c, r, oracle)
        if due is UNSET:
            raise AssertionError(f"{what}: the case has no want, no oracle and no reference")
        if r is not UNSET and (c.want is not UNSET or oracle is not None):
            _reference_agrees(r, due, what, same)
        dues.append(due)
        try:
            _expect(g, due, what, same)
        except pytest.fail.Exception as failed:
            if not mistakes:
                raise
            rest = [_due(later, r_later, oracle) for later, r_later in zip(cases[len(dues):], refs[len(dues):])]
            hint = diagnose(mistakes, cases, got, dues + rest, same)
            if not hint:
                raise
            pytest.fail(str(failed.msg) + hint, pytrace=False)
    return got


def _reference_agrees(r, due, what: str, same: Callable) -> None:
    """The reference must give what the oracle (or the case) gives; if not, the test is wrong."""
    if isinstance(due, Returns):
        ok = not isinstance(r, Raises) and (due.kind is None or type(r) is due.kind)
    elif isinstance(r, Raises) or isinstance(due, Raises):
        ok = r == due
    else:
        ok = _same(same, r, due)
    if not ok:
        raise AssertionError(f"{what}: the reference gives {show(r)}, the test expects {show(due)}; "
                             f"the test is wrong, not the submission")


def _expect(got, due, what: str, same: Callable) -> None:
    """``got`` is what ``impl.map`` gave: a value, or the exception the submission raised."""
    if isinstance(due, Raises):
        expect_error(got, due.name, what)
    elif isinstance(due, Returns) and not isinstance(got, BaseException):
        if due.kind is not None and type(got) is not due.kind:
            fail(what, got, due, f"expected {due.kind.__name__}, got {_kind(got)}")
    elif isinstance(got, BaseException):
        where = getattr(got, "student_traceback", "")  # their own frames, as an uncaught error shows them
        tb = f"\nTraceback (your code, most recent call last):\n{where}" if where else ""
        pytest.fail(f"{what}\n  expected: {show(due)}\n  got:      {ended(got)}{tb}", pytrace=False)
    else:
        same(got, due, what)
