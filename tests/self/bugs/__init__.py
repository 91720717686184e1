"""Planted bugs: the mistakes students really make, as one-line edits of the reference.

Each ``tests/self/bugs/<problem>.py`` holds ``BUGS``: a list of ``Bug``s against that problem's
reference module. A planted-bug submission is the reference with exactly one bug applied; the
project's suite checks that it loses points on its own problem and on no other, and, for a bug
that is a named misconception (``mistake``), that a failure message names it.
"""

import dataclasses
import importlib
import pkgutil
from pathlib import Path

from seam.problems import PROBLEMS, problem_number

REFERENCE = Path(__file__).resolve().parents[3] / "reference"


@dataclasses.dataclass(frozen=True)
class Bug:
    problem: str
    name: str          # what the student got wrong, in a few words
    old: str           # text in reference/<problem>.py (must occur exactly ``count`` times)
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
                                 f"in reference/{self.problem}.py, found {found}")
        return source.replace(self.old, self.new)

    def build(self, dest: Path) -> Path:
        """A submission folder: every reference module, this bug applied to its problem's."""
        dest.mkdir(parents=True, exist_ok=True)
        for problem in PROBLEMS:
            src = REFERENCE / f"{problem}.py"
            text = src.read_text()
            if problem == self.problem:
                text = self.apply(text)
            (dest / f"{problem}.py").write_text(text)
        return dest


def all_bugs() -> list[Bug]:
    bugs = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: problem_number(i.name)):
        module = importlib.import_module(f"{__name__}.{info.name}")
        bugs += module.BUGS
    return bugs
