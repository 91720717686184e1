"""The student bundle: what ships, what does not, and that plain `pytest` there runs the
public tests against student_stubs/ (all failing on NotImplementedError at first)."""

import shutil
import subprocess
import sys

import pytest

from grader.paths import REFERENCE, ROOT
from grader.release import release_student
from seam.problems import LAYOUT, PROBLEMS, files, folder


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_student_bundle(tmp_path):
    bundle = release_student(tmp_path / "hw2")
    shipped = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    for problem in PROBLEMS:  # what the layout (seam/problems.py) ships of each problem, and only that
        for kind, path in files(problem).items():
            there = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(str(path)))
            assert all((p in shipped) == kind.shipped for p in there), (problem, kind.kind, there)
    assert files("tensors").stub.as_posix() in shipped and files("tensors").snapshot.as_posix() in shipped
    assert "assignment/README.md" in shipped and "pyproject.toml" in shipped
    assert {"requirements.txt", ".gitignore", "conftest.py", "assignment/notes/001.txt"} <= shipped
    secrets = {f"{folder(k.kind)}/" for k in LAYOUT if not k.shipped} | {"grader/", "tests/self/"}
    for secret in sorted(secrets):  # the reference, the hidden tests, the grader and the suite
        assert not any(p.startswith(secret) for p in shipped), secret

    def pytest_in_bundle(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", *args], cwd=bundle,
                              capture_output=True, text=True, timeout=600)

    stubs = pytest_in_bundle()
    assert stubs.returncode == 1, stubs.stdout[-2000:]
    summary = stubs.stdout.strip().splitlines()[-1]
    assert " not implemented" in summary and " passed" not in summary, summary
    assert "not implemented yet" in stubs.stdout

    shutil.copytree(REFERENCE, tmp_path / "solution")  # a student's finished copy
    solved = pytest_in_bundle(f"--impl={tmp_path / 'solution'}")  # "=": not a path argument
    assert solved.returncode == 0, solved.stdout[-3000:]
