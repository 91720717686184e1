"""Which grader made a grade: its version and a hash of what decides every point.

``stamp()`` goes into every results.json (top-level ``extra_data.grader``, a key Gradescope
keeps) and every batch.json. The hash covers the graded tests with their points markers (the
rubric), their snapshots and helpers, the seam and its probes, and the reference the tests
compare against: change any of them and the hash changes, so a rerun of a batch regrades
everyone (batch.py) and `merge` refuses to join passes graded by different tests.
"""

import hashlib
import importlib.metadata
import tomllib
from functools import lru_cache

from .paths import ROOT, SEAM, TEST_SUPPORT
from seam.problems import LAYOUT, folder

PACKAGE = "cs336-accounting-grader"


@lru_cache(maxsize=1)
def version() -> str:
    """pyproject.toml's version (the checkout's, which is what runs), else the installed one."""
    try:
        return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return importlib.metadata.version(PACKAGE)


def graded_files() -> list:
    """Every file whose change can change a grade, sorted (relative to ROOT): the seam, the test
    support, and the folders of the kinds of problem file the layout marks ``graded``
    (seam/problems.py: the reference, the tests, their snapshots, helpers and probes)."""
    roots = [*(ROOT / folder(k.kind) for k in LAYOUT if k.graded), SEAM, *(ROOT / rel for rel in TEST_SUPPORT)]
    files = set()
    for root in roots:
        if root.is_file():
            files.add(root)
        elif root.is_dir():
            files.update(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                         and p.suffix in (".py", ".json"))
    return sorted(files)


@lru_cache(maxsize=1)
def tests_hash() -> str:
    digest = hashlib.sha256()
    for path in graded_files():
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def stamp() -> dict:
    return {"version": version(), "tests": tests_hash()}
