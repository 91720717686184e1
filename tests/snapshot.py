"""Public tests compare with snapshots: the reference's answers on fixed inputs, stored as JSON.

A public test module declares its inputs next to its tests,

    SNAPSHOT_INPUTS = {"tensors.view_strides": [((3, 4), (4, 1), (4, 3)), ...]}

and `python -m grader snapshots` runs them through the reference and writes the problem's
snapshot, tests/public/snapshots/<problem>.json (where seam/problems.py's layout puts it; a
self-test fails while a snapshot is stale). Students get the JSON, never the reference.

A target's answers are compared at one tolerance, declared beside its inputs,

    SNAPSHOT_TOLERANCE = {"scaling.fit_power_law": CONDITIONED}    (default: CONDITIONED)

and the same tolerance judges whether a snapshot is stale: a float that moves in its 16th digit
with the machine's BLAS or libm kernel is the same answer, as it is to the public test.
"""

import importlib
import json
from functools import lru_cache
from pathlib import Path

from seam import PASSTHROUGH, codec
from seam.probes import problem_of
from seam.problems import dotted, files, folder
from tests.checks import CONDITIONED, call_text, expect_equal, expect_raises

ROOT = Path(__file__).resolve().parents[1]  # the repository, or the students' bundle
SNAPSHOT_DIR = ROOT / folder("snapshot")


@lru_cache(maxsize=None)
def load(problem: str) -> dict:
    data = json.loads((ROOT / files(problem).snapshot).read_text())
    return {target: [codec.from_plain(case) for case in cases]
            for target, cases in data["cases"].items()}


def tolerance(target: str) -> dict:
    """The tolerance ``target``'s snapshot is compared at (its test module's SNAPSHOT_TOLERANCE)."""
    module = importlib.import_module(dotted(files(problem_of(target)).public_test))
    return dict(getattr(module, "SNAPSHOT_TOLERANCE", {}).get(target, CONDITIONED))


def check_snapshot(impl, target: str) -> None:
    """Every recorded case of ``target``: same result as the reference (or the same exception)."""
    cases = load(problem_of(target))[target]
    assert cases, f"no snapshot cases for {target}"
    tol = tolerance(target)
    for case in cases:
        args, what = case["args"], call_text(target, case["args"])
        if "raises" in case:
            expect_raises(PASSTHROUGH[case["raises"]], lambda: impl.call(target, *args), what)
        else:
            expect_equal(impl.call(target, *args), case["expected"], what, **tol)
