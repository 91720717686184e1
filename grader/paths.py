"""Where things are. The grader runs from a checkout (or a copy) of this repository: it reads the
tests, the reference and the handout from there. ``seam`` is a package of its own, installed with
the grader (pyproject.toml); pytest finds ``tests`` through the project's pyproject.toml
(``pythonpath``), which every graded run passes with ``-c``."""

from pathlib import Path

from seam.problems import files, folder

ROOT = Path(__file__).resolve().parents[1]
SEAM = ROOT / "seam"
# The folders of the problems' files (seam/problems.py, LAYOUT); one problem's: ``problem_file``.
REFERENCE = ROOT / folder("reference")
STUBS = ROOT / folder("stub")
SCHEMA = Path(__file__).with_name("results.schema.json")
TEST_DIRS = (ROOT / folder("public_test"), ROOT / folder("hidden_test"))  # the graded tests
# What each ruled function's shortcut earns with the watch blinded (tests/self/behaviour.py
# writes it; grader/trust.py's tables read it)
BEHAVIOUR = ROOT / "tests" / "self" / "behaviour.json"
# What any graded test imports besides the code under test (relative to ROOT): the seam and the
# test helpers. The students' bundle and the Gradescope zip both ship it.
TEST_SUPPORT = ("seam", "tests/__init__.py", "tests/conftest.py", "tests/checks.py", "tests/snapshot.py",
                str(folder("common")))


def problem_file(problem: str, kind: str, root: Path = ROOT) -> Path:
    """A problem's file of one kind (seam/problems.py, LAYOUT) in the checkout at ``root``:
    ``problem_file("optim", "hidden_test")`` is ROOT/tests/hidden/test_optim.py. Kind "module":
    its module in the submission folder ``root`` (optim.py)."""
    return Path(root) / getattr(files(problem), kind)


def out_problem(out: Path, folder: bool) -> str | None:
    """Why ``--out`` cannot be written (checked before any grading, so a typo costs nothing), or
    None. ``folder``: OUT_DIR (batch, merge), else a file (grade's results.json)."""
    out = Path(out).absolute()
    if out.exists():
        if folder and not out.is_dir():
            return f"--out {out} is a file; give a folder"
        if not folder and out.is_dir():
            return f"--out {out} is a folder; give the results.json file to write"
    parent = out if folder and out.is_dir() else out.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"--out {out}: {parent} is a file, not a folder"
    import tempfile
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as e:
        return f"--out {out}: cannot write in {parent} ({e.strerror or e})"
    return None
