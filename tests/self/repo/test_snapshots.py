"""Snapshots are judged current at the tolerance their public test uses: the same check passes on
every BLAS kernel this CPU runs (numpy picks its kernel by CPU, and the 16th digit of a fit moves
with it), while a real change of a stored value, an input or an exception is still caught."""

import copy
import json
import os
import platform
import shutil
import subprocess
import sys

import pytest

from grader.paths import ROOT
from grader.snapshots import check, differences, generate, write
from tests.checks import CONDITIONED
from tests.snapshot import SNAPSHOT_DIR, tolerance

# OpenBLAS kernels to run the check under, and the CPU flag each needs (Prescott: any x86-64).
KERNELS = {"Haswell": "avx2", "SkylakeX": "avx512f", "Prescott": "sse3"}


def cpu_flags() -> set[str]:
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return set()
    return {f for line in text.splitlines() if line.startswith("flags") for f in line.split(":", 1)[1].split()}


def kernels():
    flags, out = cpu_flags(), []
    for kernel, flag in KERNELS.items():
        why = ("OpenBLAS's x86-64 kernels" if platform.machine() != "x86_64" else
               f"this CPU lacks {flag}" if flag.replace("sse3", "pni") not in flags else None)
        out.append(pytest.param(kernel, id=kernel, marks=[pytest.mark.skip(reason=f"not here: {why}")] if why else []))
    return out


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
@pytest.mark.parametrize("kernel", kernels())
def test_check_passes_under_every_blas_kernel(kernel):
    """`python -m grader snapshots --check` as a contributor runs it, with numpy on ``kernel``."""
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel}
    run = subprocess.run([sys.executable, "-m", "grader", "snapshots", "--check"], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "snapshots are up to date with reference/", \
        run.stdout + run.stderr


@pytest.fixture(scope="module")
def scaling():
    """(the committed scaling.json, what the reference gives now)"""
    return json.loads((SNAPSHOT_DIR / "scaling.json").read_text()), generate("scaling")


def scaled(stored: dict, target: str, index: int, item: int, factor: float) -> dict:
    """``stored`` with one float of one answer multiplied by ``factor``."""
    out = copy.deepcopy(stored)
    out["cases"][target][index]["expected"]["$t"][item] *= factor
    return out


def test_the_committed_snapshot_is_current(scaling):
    stored, fresh = scaling
    assert differences(stored, fresh) == []


def test_a_16th_digit_is_the_same_answer(scaling):
    """What another BLAS kernel does: a few ulps, far inside the public test's rtol 1e-9."""
    stored, fresh = scaling
    assert differences(scaled(stored, "scaling.fit_power_law", 2, 1, 1 + 4e-16), fresh) == []
    assert differences(scaled(stored, "scaling.fit_power_law", 2, 1, 1 + 1e-12), fresh) == []


def test_a_real_change_of_a_value_is_caught_and_named(scaling):
    stored, fresh = scaling
    rtol = CONDITIONED["rtol"]
    assert tolerance("scaling.fit_power_law") == CONDITIONED
    [why] = differences(scaled(stored, "scaling.fit_power_law", 2, 1, 1 + 10 * rtol), fresh)
    assert why.startswith("scaling.fit_power_law case 2: stored (") and f"tolerance rtol={rtol:g}" in why, why
    assert "the reference gives (" in why and "at [1]: values differ" in why, why


def test_exact_values_inputs_and_exceptions_are_compared_exactly(scaling):
    stored, fresh = scaling
    data = generate("dtypes")
    bumped = copy.deepcopy(data)
    bumped["cases"]["dtypes.bits"][0]["expected"] += 1
    assert [w.split(":")[0] for w in differences(bumped, data)] == ["dtypes.bits case 0"]
    moved = copy.deepcopy(stored)
    moved["cases"]["scaling.fit_power_law"][0]["args"]["$t"][0][0] = 2
    assert differences(moved, fresh) == ["scaling.fit_power_law case 0: its inputs or its exception changed"]
    renamed = copy.deepcopy(stored)
    renamed["cases"]["scaling.fit_power_law"][5]["raises"] = "TypeError"
    assert differences(renamed, fresh) == ["scaling.fit_power_law case 5: its inputs or its exception changed"]
    fewer = copy.deepcopy(stored)
    del fewer["cases"]["scaling.mup_learning_rate"][-1]
    assert differences(fewer, fresh) == ["scaling.mup_learning_rate: 5 cases stored, 6 now"]
    retyped = copy.deepcopy(data)
    retyped["cases"]["dtypes.bits"][0]["expected"] = 32.0  # a float where an int is due
    [why] = differences(retyped, data)
    assert why.startswith("dtypes.bits case 0: stored 32.0") and "expected int, got float" in why, why


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_check_and_write_on_a_folder(tmp_path, scaling):
    """End to end: a really changed file is stale, with its path; a file that differs only in ulps
    is current, and ``write`` leaves it byte for byte, rewriting only the stale one."""
    stored, _ = scaling
    shutil.copytree(SNAPSHOT_DIR, tmp_path, dirs_exist_ok=True)
    (tmp_path / "scaling.json").write_text(json.dumps(scaled(stored, "scaling.fit_power_law", 2, 0, 1 + 1e-6)))
    ulps = json.loads((SNAPSHOT_DIR / "intensity.json").read_text())
    target = next(t for t, cases in ulps["cases"].items() if isinstance(cases[0].get("expected"), float))
    ulps["cases"][target][0]["expected"] *= 1 + 2e-16 * 4
    (tmp_path / "intensity.json").write_text(ulps_text := json.dumps(ulps))
    (tmp_path / "flops.json").unlink()
    stale = check(tmp_path)
    assert [line.split(" (run")[0] for line in stale] == [f"stale snapshot: {tmp_path / 'flops.json'}",
                                                         f"stale snapshot: {tmp_path / 'scaling.json'}"], stale
    assert "missing, or not a snapshot file" in stale[0]
    assert "scaling.fit_power_law case 2" in stale[1] and f"tolerance rtol={CONDITIONED['rtol']:g}" in stale[1]
    assert sorted(p.name for p in write(tmp_path)) == ["flops.json", "scaling.json"]
    assert (tmp_path / "intensity.json").read_text() == ulps_text
    assert check(tmp_path) == []
