"""`python -m grader release --student DIR`: the bundle students get.

The handout (with the lecture notes it cites), the stubs, the public tests with their snapshots
and the seam they need, and the few files in grader/student_bundle/ (a pytest set-up whose plain
`pytest` runs those tests against student_stubs/, a top-level conftest.py, a README, a
.gitignore); requirements.txt is written from this repository's pinned dependencies. No
reference, no hidden tests, no grader.
"""

import shutil
import tomllib
from pathlib import Path

from .paths import ROOT, TEST_SUPPORT
from seam.problems import LAYOUT, folder


def _within(path: str, folders) -> bool:
    return any(path == f or path.startswith(f"{f}/") for f in folders)


def _shipped() -> tuple[str, ...]:
    """What the bundle copies, relative to ROOT: the handout, the test support, and the folder of
    each kind of problem file the layout ships (seam/problems.py) that is not inside those."""
    base = ("assignment", *TEST_SUPPORT)
    kinds = dict.fromkeys(str(folder(k.kind)) for k in LAYOUT if k.shipped)
    return base + tuple(f for f in kinds if not _within(f, base)
                        and not _within(f, [g for g in kinds if g != f]))


SHIPPED = _shipped()
BUNDLE_FILES = Path(__file__).with_name("student_bundle")
# the reference's type checks, the results schema, batch's roster and raw record
GRADER_ONLY = ("beartype", "jsonschema", "pyyaml", "pytest-json-report")


class ReleaseError(Exception):
    """The bundle cannot be written where asked; the message says why."""


def requirements() -> str:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    kept = [d for d in deps if not d.startswith(GRADER_ONLY)]
    return ("# Pinned: an unpinned torch pulls a multi-GB CUDA build on Linux.\n"
            + "".join(f"{d}\n" for d in kept))


def release_student(dest: Path) -> Path:
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise ReleaseError(f"{dest} is a file; give a new or empty folder")
    if dest.exists() and any(dest.iterdir()):
        raise ReleaseError(f"{dest} is not empty; give a new or empty folder "
                           "(a release never overwrites a student's work)")
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for rel in SHIPPED:
        src, target = ROOT / rel, dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, ignore=ignore)
        else:
            shutil.copy2(src, target)
    for src in BUNDLE_FILES.iterdir():
        if src.is_file():
            shutil.copy2(src, dest / src.name)
    (dest / "requirements.txt").write_text(requirements())
    return dest
