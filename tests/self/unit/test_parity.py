"""student_stubs/ and reference/ expose the same API: names, signatures, docstrings, given code."""

import dataclasses
import importlib
import inspect

import pytest

from grader.paths import REFERENCE, STUBS
from seam.callee import load_package
from seam.problems import PROBLEMS

REF, STUB = "parity_reference", "parity_stubs"
load_package(REFERENCE, REF)
load_package(STUBS, STUB)


def public(module) -> dict:
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and not inspect.ismodule(obj)
            and getattr(obj, "__module__", module.__name__) in (module.__name__, None)
            or name.isupper() and not name.startswith("_")}


def norm(text, package) -> str:
    return str(text).replace(f"{package}.", "")


def describe(obj, package):
    """What must match between stub and reference for one public object."""
    if inspect.isclass(obj):
        members = {k: describe(v, package) for k, v in vars(obj).items()
                   if inspect.isfunction(v) and (not k.startswith("_") or k == "__init__")}
        fields = [(f, norm(t, package)) for f, t in getattr(obj, "__annotations__", {}).items()]
        return ("class", inspect.getdoc(obj), fields, members)
    if inspect.isfunction(obj):
        return ("function", norm(inspect.signature(obj), package), inspect.getdoc(obj))
    return ("value", norm(repr(obj), package))


@pytest.mark.parametrize("problem", PROBLEMS)
def test_same_api(problem):
    ref = importlib.import_module(f"{REF}.{problem}")
    stub = importlib.import_module(f"{STUB}.{problem}")
    assert inspect.getdoc(ref) == inspect.getdoc(stub), "module docstrings differ"
    r, s = public(ref), public(stub)
    assert sorted(r) == sorted(s), f"public names differ: {sorted(set(r) ^ set(s))}"
    for name in r:
        assert describe(r[name], REF) == describe(s[name], STUB), f"{problem}.{name} differs"


@pytest.mark.parametrize("problem", PROBLEMS)
def test_documented(problem):
    """Every public function and method has a docstring that says what to compute."""
    stub = importlib.import_module(f"{STUB}.{problem}")
    for name, obj in public(stub).items():
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert len(inspect.getdoc(obj) or "") > 40, f"{problem}.{name} needs a real docstring"


@pytest.mark.parametrize("problem", PROBLEMS)
def test_stub_bodies_raise_not_implemented(problem):
    """Every stub function (and method students fill in) raises NotImplementedError."""
    stub = importlib.import_module(f"{STUB}.{problem}")
    for name, obj in public(stub).items():
        if dataclasses.is_dataclass(obj):
            continue  # given code (FloatFormat, TransformerConfig)
        funcs = [obj] if inspect.isfunction(obj) else [
            v for k, v in vars(obj).items() if inspect.isfunction(v)] if inspect.isclass(obj) else []
        for fn in funcs:
            assert "raise NotImplementedError" in inspect.getsource(fn), \
                f"{problem}.{name}: {fn.__name__} is not a stub"
