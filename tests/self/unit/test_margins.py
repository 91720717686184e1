"""benchmarks/margins.py's figures: the deviation each toleranced comparison hands
the observer, as a multiple of its tolerance, agrees with the comparison's own verdict; and the
table's rules (per test, the worst correct answer, the closest mistake caught)."""

import importlib.util
import math

import pytest
import torch

from grader.paths import ROOT
from tests import checks

spec = importlib.util.spec_from_file_location("margins", ROOT / "benchmarks" / "margins.py")
margins = importlib.util.module_from_spec(spec)
spec.loader.exec_module(margins)


@pytest.fixture
def seen(monkeypatch):
    out = []
    monkeypatch.setattr(checks, "observer", lambda ratio, rtol, atol: out.append((ratio, rtol, atol)))
    return out


@pytest.mark.parametrize("got, expected, rtol, atol", [
    (1.0 + 1e-12, 1.0, 1e-12, 0.0), (1.0 + 3e-12, 1.0, 1e-12, 0.0), (1e-3, 0.0, 1e-9, 1e-3),
    (2e-3, 0.0, 1e-9, 1e-3), (-5.0, -5.0000001, 1e-9, 0.0), (math.inf, math.inf, 1e-9, 0.0),
    (math.inf, 1.0, 1e-9, 0.0)])
def test_a_floats_ratio_is_over_1_exactly_when_it_fails(seen, got, expected, rtol, atol):
    verdict = checks.mismatch(got, expected, rtol, atol) is None
    [(ratio, r, a)] = seen
    assert (r, a) == (rtol, atol) and (ratio <= 1) == verdict, (ratio, verdict)


def test_a_tensors_ratio_is_its_worst_element_and_over_1_exactly_when_it_fails(seen):
    g = torch.Generator().manual_seed(0)
    expected = torch.randn(1000, generator=g)
    for scale in (1e-6, 5e-5, 1e-4, 2e-4, 1e-3):
        got = expected + scale * torch.randn(1000, generator=g)
        verdict = checks.within(got, expected, rtol=1e-4, atol=1e-5)
        ratio = seen[-1][0]
        assert (ratio <= 1) == verdict, (scale, ratio, verdict)
        bound = 1e-5 + 1e-4 * expected.double().abs()
        assert ratio == pytest.approx(float(((got.double() - expected.double()).abs() / bound).max()))
    nan = torch.tensor([float("nan"), 1.0])
    assert checks.tensors_match(nan.clone(), nan, rtol=1e-4, atol=0.0) and seen[-1][0] == 0.0  # equal NaNs
    assert not checks.within(nan.clone(), nan, rtol=1e-4, atol=0.0) and seen[-1][0] == math.inf  # not equal_nan


def test_exact_comparisons_are_not_observed(seen):
    checks.mismatch(1.5, 1.5)
    checks.tensors_match(torch.ones(3), torch.ones(3))
    assert seen == []


def _run(ratios: dict) -> dict:
    return {"ratios": ratios, "failed": []}


def test_the_table_takes_the_worst_correct_and_the_closest_mistake_caught():
    test, other = "tests/hidden/test_x.py::test_a", "tests/hidden/test_x.py::test_b"
    correct = {"reference": _run({test: {"rtol=0.0001, atol=1e-05": 0.01}}),
               "alternative": _run({test: {"rtol=0.0001, atol=1e-05": 0.2}, other: {"rtol=1e-12, atol=0": 0.0}})}
    mistakes = {"bug a": _run({test: {"rtol=0.0001, atol=1e-05": 40.0}}),
                "bug b": _run({test: {"rtol=0.0001, atol=1e-05": 3.0}}),
                "bug not caught here": _run({test: {"rtol=0.0001, atol=1e-05": 0.5}}),
                "bug of a test no correct answer runs": _run({"tests/hidden/test_x.py::test_gpu": {"rtol=0, atol=1": 2.0}})}
    rows = {r["test"]: r for r in margins.margins(correct, mistakes)}
    assert set(rows) == {test, other}
    assert (rows[test]["worst_correct"], rows[test]["_worst_by"]) == (0.2, "alternative")
    assert (rows[test]["closest_mistake"], rows[test]["_closest_by"]) == (3.0, "bug b")
    assert rows[other]["closest_mistake"] == margins.NONE and rows[other]["tolerance"] == "rtol=1e-12, atol=0"
    assert margins.under(rows[test]) and not margins.under(rows[other])


def test_a_per_case_band_is_one_check_and_every_explained_test_exists():
    band = {f"rtol=0, atol={a}": 0.1 for a in (0.01, 0.02, 0.5, 0.9)}
    [row] = margins.margins({"reference": _run({"t::band": band})}, {})
    assert row["tolerance"] == "per case: rtol=0, atol 0.01 to 0.9"
    for test in margins.WHY:  # a reason for a test that is no longer there is a stale reason
        path, _, name = test.partition("::")
        assert f"def {name}(" in (ROOT / path).read_text(), test
