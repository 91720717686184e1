"""`python -m grader grade` end to end, through the sandbox: the reference gets full marks, the
stubs 0 (every test failing on NotImplementedError), a planted bug costs its own problem only,
and broken uploads (zip, nesting, syntax errors, missing or crashing modules) get valid reports."""

import json
import zipfile

import pytest
import torch

from grader.paths import REFERENCE, STUBS
from grader.report import per_problem, validate
from seam.problems import PROBLEMS
from tests.self.bugs import all_bugs
from tests.self.shared import cli, grade_cli, graded_reference
from tests.self.submissions import reference_with


def scores(results) -> dict:
    return {row["problem"]: (row["score"], row["max"]) for row in per_problem(results)}


@pytest.fixture(scope="module")
def reference_results(tmp_path_factory):
    return graded_reference(tmp_path_factory)


def test_reference_gets_full_marks(reference_results):
    results, table = reference_results
    total = sum(t["max_score"] for t in results["tests"])
    assert results["score"] == total > 0
    assert {row["problem"] for row in per_problem(results)} == set(PROBLEMS)
    assert f"Score: {total:g}/{total:g}" in table
    assert all(t["status"] == "passed" for t in results["tests"])


def test_visibility(reference_results):
    results, _ = reference_results
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}


def test_stubs_get_zero_every_test_not_implemented(tmp_path):
    results, table = grade_cli(STUBS, tmp_path / "results.json")
    assert results["score"] == 0
    for t in results["tests"]:
        assert t["status"] == "failed"
        assert "not implemented" in t["output"] or "NotImplementedError" in t["output"] \
            or "not run: needs CUDA" in t["output"], t
    assert "Score: 0/" in table


def test_planted_bug_costs_its_problem_only(tmp_path, reference_results):
    """One bug, submitted as a zip with the folder nested one level down (as students do)."""
    bug = next(b for b in all_bugs() if b.problem == "tensors")
    folder = bug.build(tmp_path / "unzipped" / "hw2")
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in folder.iterdir():
            zf.write(f, f"hw2/{f.name}")
    results, table = grade_cli(archive, tmp_path / "results.json")
    got, full = scores(results), scores(reference_results[0])
    assert got["tensors"][0] < full["tensors"][0]
    assert {p: s for p, s in got.items() if p != "tensors"} == {p: s for p, s in full.items() if p != "tensors"}
    assert "1 level(s) down" in results["output"]
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed and all(t["name"].startswith("tensors:") for t in failed)
    assert any("expected:" in t["output"] and "got:" in t["output"] for t in failed)
    assert "FAIL" in table and "expected:" in table


def test_broken_modules_cost_only_their_problems(tmp_path, reference_results):
    sub = reference_with(tmp_path / "sub")
    (sub / "dtypes.py").write_text("def bits(fmt):\n    return (\n")             # syntax error
    (sub / "scaling.py").unlink()                                              # missing
    (sub / "intensity.py").write_text("import os\nos._exit(3)\n")               # dies on import
    (sub / "memory.py").write_text("import numpy_typo\n")                       # missing import
    results, table = grade_cli(sub, tmp_path / "results.json", "--time-limit", "10")
    got, full = scores(results), scores(reference_results[0])
    for p in ("dtypes", "scaling", "intensity", "memory"):
        assert got[p][0] == 0, p
    assert {p: s for p, s in got.items() if p not in ("dtypes", "scaling", "intensity", "memory")} == \
        {p: s for p, s in full.items() if p not in ("dtypes", "scaling", "intensity", "memory")}
    outputs = {t["name"].split(":")[0]: t["output"] for t in results["tests"] if t["status"] == "failed"}
    assert "dtypes.py could not be imported (SyntaxError" in outputs["dtypes"]
    assert outputs["scaling"] == "scaling.py is missing from the submission"  # the layout: once, below
    assert table.count("Expected layout") == 1 and "Expected layout" in results["output"]
    assert [line for line in table.splitlines() if line.startswith("FAIL 11")] == \
        [f"FAIL 11 scaling: all {sum(t['name'].startswith('scaling:') for t in results['tests'])} "
         f"tests ({full['scaling'][1]:g} pt): scaling.py is missing from the submission"]
    assert "intensity.py kills the worker when it is loaded" in outputs["intensity"]
    assert "No module named 'numpy_typo'" in outputs["memory"]
    assert "missing: scaling.py" in results["output"]


@pytest.mark.parametrize("upload", ["empty folder", "empty zip", "not a zip"])  # (no such path: exit 2,
# see test_batch.py::test_the_tas_mistakes_exit_2_with_one_line)
def test_unusable_uploads_get_a_report(tmp_path, upload):
    target = tmp_path / "upload"
    if upload == "empty folder":
        target.mkdir()
    elif upload == "empty zip":
        target = tmp_path / "upload.zip"
        zipfile.ZipFile(target, "w").close()
    elif upload == "not a zip":
        target = tmp_path / "upload.zip"
        target.write_text("hello")
    results, table = grade_cli(target, tmp_path / "results.json", "--only", "intensity")
    assert results["score"] == 0 and results["tests"]
    assert "Expected layout" in results["output"]
    # the cause first, once; then one line for the problem, not a copy per test
    first = next(line for line in table.splitlines() if "Expected layout" in line)
    assert table.count("Expected layout") == 1 and table.index(first) < table.index(" #  problem")
    fails = [line for line in table.splitlines() if line.startswith("FAIL")]
    assert fails == [f"FAIL 4 intensity: all {len(results['tests'])} tests "
                     f"({sum(t['max_score'] for t in results['tests']):g} pt): intensity.py is missing from the submission"]


NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without CUDA")


@NO_CUDA
def test_gpu_tests_without_cuda_are_reported_not_run(tmp_path):
    """--gpu auto on a CPU machine: GPU tests fail with 'not run: needs CUDA', never pass."""
    out = tmp_path / "results.json"
    proc = cli("grade", REFERENCE, "--out", out, "--only", "optim", check=0)
    results = json.loads(out.read_text())
    validate(results)
    gpu = [t for t in results["tests"] if t.get("extra_data", {}).get("outcome") == "not_run"]
    assert gpu and all(t["status"] == "failed" and t["score"] == 0 and "needs CUDA" in t["output"]
                       for t in gpu)
    assert all(t["status"] == "passed" for t in results["tests"] if t not in gpu)
    graded = sum(t["max_score"] for t in results["tests"] if t not in gpu)
    skipped = sum(t["max_score"] for t in gpu)
    assert results["output"].splitlines()[0].startswith(
        f"Score: {graded:g}/{graded:g} graded ({skipped:g} points in {len(gpu)} tests not run: needs CUDA")
    # the table: NOT RUN, never FAIL, for a reference solution on a CPU machine
    assert "FAIL" not in proc.stdout and proc.stdout.count("NOT RUN") == len(gpu)
    # and, as a --gpu skip pass does, what is still to come and how it comes
    points = sum(t["max_score"] for t in gpu)
    assert results["extra_data"]["to_come"] == {"tests": {t["number"]: t["max_score"] for t in gpu}, "points": points}
    assert f"to come: {points:g} points in {len(gpu)} GPU tests, graded by the GPU pass (--gpu only)" in proc.stdout


@NO_CUDA
def test_cpu_auto_pass_merges_with_a_gpu_pass(tmp_path, monkeypatch):
    """A CPU pass with the default --gpu auto joins a --gpu only pass: each GPU test the CPU pass
    reported "not run" takes the GPU pass's outcome, nothing is left to come. The GPU pass is
    graded with no --out from inside tmp_path: results.json lands there, and its last line says
    where."""
    from grader import gpu as gpu_info
    from grader.batch.merge import join_results
    cpu = tmp_path / "cpu.json"
    cli("grade", REFERENCE, "--out", cpu, "--only", "optim", check=0)
    monkeypatch.chdir(tmp_path)
    proc = cli("grade", REFERENCE, "--only", "optim", "--gpu", "only", "--quiet", check=0,
               env={gpu_info.FAKE: "NVIDIA H100 80GB HBM3"})
    assert proc.stdout.rstrip().splitlines()[-1] == \
        f"wrote {tmp_path / 'results.json'} (no --out given: the current folder)"
    cpu_results, gpu_results = json.loads(cpu.read_text()), json.loads((tmp_path / "results.json").read_text())
    joined = join_results("ada", [("gpu-auto-optim", cpu_results), ("gpu-only-optim", gpu_results)])
    ran_on_gpu = {t["number"]: t for t in gpu_results["tests"]}
    assert ran_on_gpu and [t["number"] for t in joined["tests"]] == [t["number"] for t in cpu_results["tests"]]
    assert all(t == ran_on_gpu.get(t["number"], t) for t in joined["tests"])
    assert not any("needs CUDA" in t["output"] for t in joined["tests"])
    assert "to_come" not in joined["extra_data"] and "to come:" not in joined["output"]


@NO_CUDA
def test_gpu_require_without_cuda_writes_nothing(tmp_path):
    out = tmp_path / "results.json"
    proc = cli("grade", REFERENCE, "--out", out, "--gpu", "require")
    assert proc.returncode == 2 and "CUDA is not available" in proc.stderr and not out.exists()


def test_report_shows_the_students_own_frames(tmp_path):
    """An exception in student code: the report shows their frames (their file names only, no
    seam or test source), the same layout as their own pytest run."""
    sub = reference_with(tmp_path / "sub")
    flops = sub / "flops.py"
    flops.write_text(flops.read_text() + "\n\ndef _helper(m):\n    return m / 0\n\n\n"
                     "def matmul_flops(m, k, n):\n    return _helper(m) * k * n\n")
    results, table = grade_cli(sub, tmp_path / "results.json", "--only", "flops")
    outputs = [t["output"] for t in results["tests"] if "matmul_flops raised" in t["output"]]
    assert outputs, [t["output"][:200] for t in results["tests"]]
    text = outputs[0]
    head, call, traceback = text.splitlines()[:3]
    assert head == "flops.matmul_flops raised ZeroDivisionError: division by zero"
    assert call.startswith("  the call: flops.matmul_flops(") and traceback == "Traceback (your code, most recent call last):"
    assert 'File "flops.py", line' in text and "in _helper\n    return m / 0" in text
    assert "tests/" not in text and "seam" not in text and "/tmp" not in text


# -- the zygote's warm-up: torch's first optimizer step only where the grade steps one ----------
DYNAMO_PROBE = '''
import sys
def ridge_point(peak, bw):  # what the worker inherited from its zygote, before any test ran
    return 1.0 if "torch._dynamo" in sys.modules else 0.0
'''


@pytest.mark.parametrize("problems, warmed", [(["intensity"], False), (["intensity", "optim"], True)],
                         ids=["intensity", "intensity+optim"])
def test_the_zygote_takes_the_first_optimizer_step_only_for_a_grade_that_steps_one(tmp_path, problems, warmed):
    """~1.5 s of a zygote's start (zygote.STEPS_AN_OPTIMIZER): paid for a grade of optim or
    training (or of every problem), never for a one-problem grade that steps no optimizer."""
    from grader.sandbox.sandbox import Sandbox
    from grader.sandbox.zygote import STEPS_AN_OPTIMIZER, warms_optimizers
    assert STEPS_AN_OPTIMIZER <= set(PROBLEMS) and warms_optimizers(None)
    (tmp_path / "intensity.py").write_text(DYNAMO_PROBE)
    box = Sandbox(tmp_path, problems=problems)
    try:
        assert box.zygote.optimizers is warmed
        assert box.intensity.ridge_point(1.0, 1.0) == float(warmed)
    finally:
        box.close()
