"""Honest idioms: small things students write in a correct solution, each of which must cost nothing.

``tests/self/honest_idioms/<problem>.py`` lists ``IDIOMS`` for that problem. An idiom is a small
edit of the reference module (``edits``: each anchor, a piece of the reference's text found there
exactly once, and what replaces it), so the module it makes is the reference with one idiom in
it, used on the graded path where that is natural (the decorator decorates a graded function,
the dataclass builds the value returned) and behaving exactly as the reference does.

Two tests read this corpus: tests/self/unit/test_honest_idioms.py (the grader's static look at
each idiom's module charges nothing: ``static_charge``) and tests/self/grading/test_honest_idioms.py
(uploads that carry many idioms, one per module, get the reference's score table, test by test).
"""

import importlib
from dataclasses import dataclass
from pathlib import Path

from seam.problems import PROBLEMS
from tests.self.submissions import reference_text, reference_with


@dataclass(frozen=True)
class Idiom:
    name: str                           # what a student wrote, in a few words
    why: str                            # why an honest student writes it
    edits: tuple[tuple[str, str], ...]  # (anchor in the reference module, its replacement)
    problem: str = ""                   # filled in from the file it is listed in

    def text(self) -> str:
        """The reference module of ``problem`` with this idiom in it."""
        text = reference_text(self.problem)
        for anchor, replacement in self.edits:
            count = text.count(anchor)
            if count != 1:  # an anchor that moved would silently test the reference
                raise ValueError(f"{self.problem}: {self.name}: the anchor occurs {count} times: {anchor!r}")
            text = text.replace(anchor, replacement)
        return text


def all_idioms() -> list[Idiom]:
    """Every idiom, in problem order, each with its problem filled in."""
    found = []
    for problem in PROBLEMS:
        if not (Path(__file__).parent / f"{problem}.py").exists():
            continue
        module = importlib.import_module(f"{__name__}.{problem}")
        found += [Idiom(i.name, i.why, tuple(i.edits), problem) for i in module.IDIOMS]
    return found


def packed(idioms: list[Idiom]) -> list[dict[str, Idiom]]:
    """The idioms as few uploads as there are idioms in the fullest module: upload k holds the
    k-th idiom of each problem, so no upload carries two idioms in one module."""
    uploads: list[dict[str, Idiom]] = []
    for problem in PROBLEMS:
        for k, idiom in enumerate(i for i in idioms if i.problem == problem):
            if k == len(uploads):
                uploads.append({})
            uploads[k][problem] = idiom
    return uploads


def build(upload: dict[str, Idiom], dest: Path) -> Path:
    """A submission folder: the reference's modules, each problem of ``upload`` with its idiom."""
    return reference_with(dest, {problem: idiom.text() for problem, idiom in upload.items()})


def static_charge(problem: str, text: str, folder: Path) -> str:
    """What the grader says, without running it, of ``text`` as the module of ``problem``: ""
    when nothing, else its notes for review (seam/review.py), one line each. A note takes no
    point, but an honest idiom should not cost a TA a line to read either."""
    from seam.review import said, scan
    return "\n".join(said(n) for n in scan(reference_with(folder, {problem: text}, problems=[problem])))
