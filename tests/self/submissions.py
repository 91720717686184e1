"""The one way the project's suite makes a submission: the reference with some modules replaced.

Planted bugs, shortcuts, alternatives, mutants, attacks and the end-to-end tests all grade "the
reference, but this module is mine"; they differ only in how they make that module's text.
"""

from collections.abc import Mapping
from pathlib import Path

from grader.paths import REFERENCE, problem_file
from seam.problems import PROBLEMS, files

__all__ = ["REFERENCE", "reference_text", "reference_with"]


def reference_with(dest: Path, replaced: Mapping[str, str] | None = None,
                   problems: tuple[str, ...] | list[str] = PROBLEMS) -> Path:
    """``dest`` holding ``problems``' modules (default all): the reference's text, or
    ``replaced[problem]`` where given. An unknown problem in ``replaced`` is an error (a typo
    would otherwise grade the reference and pass)."""
    replaced = dict(replaced or {})
    unknown = set(replaced) - set(PROBLEMS)
    if unknown:
        raise ValueError(f"no such problem(s): {sorted(unknown)}")
    dest.mkdir(parents=True, exist_ok=True)
    for problem in problems:
        text = replaced.get(problem)
        (dest / files(problem).module).write_text(text if text is not None else reference_text(problem))
    return dest


def reference_text(problem: str) -> str:
    return problem_file(problem, "reference").read_text()
