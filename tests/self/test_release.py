"""The student bundle: what ships, what does not, and that plain `pytest` there runs the
public tests against student_stubs/ (all failing on NotImplementedError at first)."""

import shutil
import subprocess
import sys

from grader.paths import REFERENCE
from grader.release import release_student


def test_student_bundle(tmp_path):
    bundle = release_student(tmp_path / "hw2")
    shipped = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert "student_stubs/tensors.py" in shipped and "tests/public/snapshots/tensors.json" in shipped
    assert "assignment/README.md" in shipped and "pyproject.toml" in shipped
    assert {"requirements.txt", ".gitignore", "conftest.py", "assignment/notes/001.txt"} <= shipped
    for secret in ("reference/", "tests/hidden/", "grader/", "tests/self/"):
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
