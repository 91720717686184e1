"""Where things are. The grader runs from a checkout (or a copy) of this repository: it reads the
tests, the reference and the handout from there. ``seam`` is a package of its own, installed with
the grader (pyproject.toml); pytest finds ``tests`` through the project's pyproject.toml
(``pythonpath``), which every graded run passes with ``-c``."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEAM = ROOT / "seam"
REFERENCE = ROOT / "reference"
STUBS = ROOT / "student_stubs"
SCHEMA = Path(__file__).with_name("results.schema.json")
TEST_DIRS = (ROOT / "tests" / "public", ROOT / "tests" / "hidden")  # the graded tests
# What any graded test imports besides the code under test (relative to ROOT): the seam and the
# test helpers. The students' bundle and the Gradescope zip both ship it.
TEST_SUPPORT = ("seam", "tests/__init__.py", "tests/conftest.py", "tests/checks.py", "tests/snapshot.py",
                "tests/common")
