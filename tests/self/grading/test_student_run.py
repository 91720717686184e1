"""What a student sees from plain `pytest` in their bundle: a short to-do list on the stubs, their
own traceback when their code raises, one marker per problem, one-line usage errors."""

import re
import shutil
import subprocess
import sys

import pytest

from grader.release import release_student
from tests.conftest import stubs_left
from seam.problems import PROBLEMS


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return release_student(tmp_path_factory.mktemp("student") / "hw2")


def pytest_in(folder, *args):
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=folder, capture_output=True,
                          text=True, timeout=600)


def test_first_run_on_the_stubs_is_a_short_todo_list(bundle):
    run = pytest_in(bundle)
    out = run.stdout
    assert run.returncode == 1, out[-2000:]  # still a failing run
    lines = out.splitlines()
    assert len(lines) < 150, f"{len(lines)} lines"
    assert "not implemented" in lines[-1] and "passed" not in lines[-1], lines[-1]
    # one line per function still to write, each exactly once, with its file:line
    todo = [(f"{p}.{name}", f"student_stubs/{p}.py:{line}") for p in PROBLEMS
            for name, line in stubs_left(bundle / "student_stubs" / f"{p}.py")]
    assert len(todo) > 40
    for name, at in todo:
        assert len([line for line in lines if re.fullmatch(rf"\s+{re.escape(name)}\s+{re.escape(at)}", line)]) == 1, name
    # a line per problem, and what to do next
    for n, p in enumerate(PROBLEMS, 1):
        assert any(re.match(rf"\s*{n}\s+{p}\s+0 / \d+", line) for line in lines), p
    assert "next: problem 1 (tensors): read assignment/problems/tensors.md" in out
    # no seam internals: no probe names, no seam frames, no tracebacks
    assert "probes." not in out and "seam/" not in out and "Traceback" not in out


def test_a_student_error_shows_their_own_frames(bundle, tmp_path):
    mine = shutil.copytree(bundle / "student_stubs", tmp_path / "mine")
    flops = mine / "flops.py"
    text = flops.read_text()
    body = text.index("raise NotImplementedError", text.index("def matmul_flops"))
    flops.write_text(text[:body] + "return _helper(m) * k * n" + text[body + len("raise NotImplementedError"):]
                     + "\n\ndef _helper(m):\n    return m / 0\n")
    run = pytest_in(bundle, "-m", "flops", f"--impl={mine}")
    out = run.stdout
    assert run.returncode == 1
    assert "flops.matmul_flops raised ZeroDivisionError: division by zero" in out
    assert "Traceback (your code, most recent call last):" in out
    assert re.search(rf'File "{re.escape(str(mine))}/flops.py", line \d+, in matmul_flops\n\s+return _helper', out)
    assert re.search(rf'File "{re.escape(str(mine))}/flops.py", line \d+, in _helper\n\s+return m / 0', out)
    assert "seam/" not in out and "codec.py" not in out and "callee.py" not in out
    assert "called from tests/public/test_flops.py:" in out


def test_each_problem_has_a_marker_that_selects_exactly_it(bundle):
    every = [line for line in pytest_in(bundle, "--collect-only", "-q").stdout.splitlines() if "::" in line]
    for problem in ("adamw_accounting", "optim"):
        run = pytest_in(bundle, "-m", problem, "--collect-only", "-q")
        ids = [line for line in run.stdout.splitlines() if "::" in line]
        in_file = [line for line in every if line.startswith(f"tests/public/test_{problem}.py::")]
        assert ids and ids == in_file, (ids, in_file)  # its file's tests, all of them, and nothing else


def test_usage_mistakes_are_one_line(bundle):
    missing = pytest_in(bundle, "--impl=/no/such/folder")
    assert missing.returncode == 4
    said = [line for line in (missing.stdout + missing.stderr).splitlines() if "/no/such/folder" in line]
    assert len(said) == 1 and "not a folder" in said[0], missing.stdout + missing.stderr
    inside = pytest_in(bundle / "student_stubs")
    assert inside.returncode == 4
    text = (inside.stdout + inside.stderr).strip()
    assert text.count("\n") == 0 and f"cd {bundle} && python -m pytest" in text, text


def test_bundle_installs_without_clutter_and_ignores_it(bundle):
    """requirements.txt (nothing to build, so no egg-info); a .gitignore for what runs leave."""
    assert (bundle / "requirements.txt").read_text().count("==") >= 4
    ignored = (bundle / ".gitignore").read_text().split()
    assert {"__pycache__/", "*.egg-info/", ".pytest_cache/"} <= set(ignored)
    assert "[project]" not in (bundle / "pyproject.toml").read_text()
