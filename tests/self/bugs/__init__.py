"""Planted bugs: the mistakes students really make, as one-line edits of the reference.

Each problem's bugs module (seam/problems.py's layout: ``tests/self/bugs/<problem>.py``) holds
``BUGS``: a list of ``Bug``s against that problem's reference module. A planted-bug submission
is the reference with exactly one bug applied; the project's suite checks that it loses points
on its own problem and on no other, and, for a bug that is a named misconception (``mistake``),
that a failure message names it.
"""

import dataclasses
import importlib
from pathlib import Path

from seam.problems import PROBLEMS, any_problem, dotted, files, folder, owner
from tests.self.submissions import reference_text, reference_with

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / folder("reference")


@dataclasses.dataclass(frozen=True)
class Bug:
    problem: str
    name: str          # what the student got wrong, in a few words
    old: str           # text in the problem's reference module (must occur exactly ``count`` times)
    new: str           # what the student wrote instead
    count: int = 1
    mistake: str = ""  # the named mistake its failure message must name (tests.checks.Mistake), if any

    @property
    def id(self) -> str:
        return f"{self.problem}:{self.name}"

    def apply(self, source: str) -> str:
        found = source.count(self.old)
        if found != self.count:
            raise AssertionError(f"bug {self.id}: expected {self.count} occurrence(s) of {self.old!r} "
                                 f"in {files(self.problem).reference}, found {found}")
        return source.replace(self.old, self.new)

    def build(self, dest: Path) -> Path:
        """A submission folder: every reference module, this bug applied to its problem's."""
        return reference_with(dest, {self.problem: self.apply(reference_text(self.problem))})


def all_bugs() -> list[Bug]:
    """Every problem's planted bugs, in problem order (a bugs module of no problem is an error)."""
    for path in ROOT.glob(any_problem("bugs")):
        found = owner(path.relative_to(ROOT))
        if found is not None and found[1] not in PROBLEMS:
            raise ValueError(f"{path.relative_to(ROOT)}: no problem named {found[1]!r}")
    bugs = []
    for problem in PROBLEMS:
        if (ROOT / files(problem).bugs).is_file():
            bugs += importlib.import_module(dotted(files(problem).bugs)).BUGS
    return bugs
