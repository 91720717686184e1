"""The Gradescope autograder: the zip's layout, and its run_autograder grading for real with a
temporary /autograder root (the reference gets full marks, a planted bug loses exactly what it
loses in-process, both reports schema-valid). The same scripts run in a clean container in
test_docker.py."""

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import gradescope
from grader.grade import run_tests
from grader.paths import REFERENCE, ROOT
from grader.report import validate
from seam import InProcess
from seam.problems import PROBLEMS, files
from tests.self.bugs import all_bugs

BUG = next(b for b in all_bugs() if b.id == "intensity:ridge point inverted (bandwidth / peak)")


def unpack(zip_path: Path, dest: Path) -> Path:
    """As `unzip` (and Gradescope) does it: the files, with the modes stored in the zip."""
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            path = Path(zf.extract(info, dest))
            mode = info.external_attr >> 16 & 0o777
            if mode:
                path.chmod(mode)
    return dest


def test_zip_layout(tmp_path):
    zip_path = gradescope.release_gradescope(tmp_path / "autograder.zip")
    with zipfile.ZipFile(zip_path) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    names = set(infos)
    for script in ("setup.sh", "run_autograder"):
        assert script in names, script
        assert infos[script].external_attr >> 16 & 0o111 == 0o111, f"{script} is not executable"
    for problem in PROBLEMS:
        layout = files(problem)
        assert {layout.reference.as_posix(), layout.hidden_test.as_posix(), layout.public_test.as_posix()} <= names
    assert {"pyproject.toml", "README.md", "grader/gradescope.py", "grader/sandbox/zygote_server.py",
            "grader/sandbox/worker.py", "seam/__init__.py", "tests/conftest.py"} <= names
    leftovers = [n for n in names if "__pycache__" in n or n.endswith(".pyc")
                 or any(part.startswith(".") for part in n.split("/"))]
    assert not leftovers, leftovers
    assert not any(n.startswith(("tests/self/", "benchmarks/", "deploy/")) for n in names)
    # the scripts are valid bash, and name the venv and the CPU index this module defines
    source = unpack(zip_path, tmp_path / "source")
    for script in ("setup.sh", "run_autograder"):
        check = subprocess.run(["bash", "-n", str(source / script)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        assert gradescope.VENV in (source / script).read_text()
    assert f'--extra-index-url "{gradescope.TORCH_CPU_INDEX}"' in (source / "setup.sh").read_text()


def test_release_refuses_bad_destinations(tmp_path):
    def cli(dest):
        return subprocess.run([sys.executable, "-m", "grader", "release", "--gradescope", str(dest)],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
    made = cli(tmp_path / "ag.zip")
    assert made.returncode == 0 and (tmp_path / "ag.zip").is_file(), made.stderr
    for dest, why in ((tmp_path / "ag.zip", "exists"), (tmp_path / "ag.tar", "must be a .zip")):
        r = cli(dest)
        assert r.returncode == 2 and why in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory):
    return gradescope.release_gradescope(tmp_path_factory.mktemp("zip") / "autograder.zip")


def run_autograder(zip_path: Path, root: Path, submission: Path) -> dict:
    """Lay out /autograder as Gradescope does, under ``root``, and run run_autograder there
    with this interpreter standing in for setup.sh's venv."""
    unpack(zip_path, root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    shutil.copytree(submission, root / "submission")
    (root / "results").mkdir()
    env = {**os.environ, gradescope.ROOT_ENV: str(root), "GRADER_PYTHON": sys.executable}
    proc = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = root / "results" / "results.json"
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    results = json.loads(out.read_text())
    validate(results)
    return results


def test_run_autograder_reference_and_planted_bug(autograder_zip, tmp_path):
    """~2 x a full sandboxed grade (a few minutes on 2 busy cores)."""
    ref = run_autograder(autograder_zip, tmp_path / "ref", REFERENCE)
    total = sum(t["max_score"] for t in ref["tests"])
    assert ref["score"] == total > 0, [t["name"] for t in ref["tests"] if t["status"] != "passed"]
    lines = ref["output"].splitlines()
    assert lines[0] == f"Score: {total:g}/{total:g}" and lines[1] == gradescope.GPU_NOTE
    assert any(line.startswith("sandbox: ") for line in lines)

    bug = run_autograder(autograder_zip, tmp_path / "bug", BUG.build(tmp_path / "bug-src"))
    lost = {t["name"].split(": ", 1)[1] for t in bug["tests"] if t["status"] != "passed"}
    impl = InProcess(BUG.build(tmp_path / "bug-inproc"), package="gs_bug_inproc")
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True,
                      problems=[BUG.problem]).facts.values()
    expected = {f.title for f in facts if f.outcome != "passed"}
    assert lost == expected and lost, (lost, expected)
    assert all(t["name"].startswith(f"{BUG.problem}:") for t in bug["tests"] if t["status"] != "passed")
    assert bug["score"] == total - sum(t["max_score"] for t in bug["tests"] if t["status"] != "passed")


def test_run_autograder_reports_its_own_failure(tmp_path, monkeypatch):
    """When grading itself breaks, the student still gets a valid report that says so."""
    import grader.grade

    def broken(*a, **k):
        raise RuntimeError("the test run itself failed")
    monkeypatch.setattr(grader.grade, "grade", broken)
    monkeypatch.setenv(gradescope.ROOT_ENV, str(tmp_path))
    (tmp_path / "submission").mkdir()
    assert gradescope.run_autograder() == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    validate(results)
    assert results["score"] == 0 and "could not grade" in results["output"]
    assert "RuntimeError: the test run itself failed" in results["output"]
