"""`python -m grader release --student DIR`: the bundle students get.

The handout, the stubs, the public tests with their snapshots and the seam they need, and a
pyproject whose plain `pytest` runs those tests against student_stubs/. No reference, no hidden
tests, no grader.
"""

import shutil
from pathlib import Path

from .paths import ROOT

SHIPPED = ("assignment", "student_stubs", "tests/__init__.py", "tests/conftest.py", "tests/seam",
           "tests/public")

STUDENT_PYPROJECT = '''[project]
name = "cs336-assignment2-accounting"
version = "0.1.0"
requires-python = ">=3.11"
# Pinned: an unpinned torch pulls a multi-GB CUDA build on Linux.
dependencies = ["torch==2.13.0", "numpy==2.4.6", "jaxtyping==0.3.11", "pytest==9.0.3"]

[tool.setuptools]
packages = []

[tool.pytest.ini_options]
# `pytest` runs the public tests against student_stubs/ (`--impl=DIR` for another folder).
testpaths = ["tests/public"]
addopts = "-p no:cacheprovider"
pythonpath = ["."]
'''

README = '''# Assignment 2: PyTorch building blocks and resource accounting

Read `assignment/README.md` first. Then:

    python -m pip install -e .
    python -m pytest

(on Linux, for torch's CPU build instead of the multi-GB CUDA one:
`python -m pip install --extra-index-url https://download.pytorch.org/whl/cpu -e .`)
and fill in `student_stubs/` until the public tests pass. Submit the eleven module files.
'''


def release_student(dest: Path) -> Path:
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for rel in SHIPPED:
        src, target = ROOT / rel, dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, ignore=ignore)
        else:
            shutil.copy2(src, target)
    (dest / "pyproject.toml").write_text(STUDENT_PYPROJECT)
    (dest / "README.md").write_text(README)
    return dest
