"""The rubric is the tests: each graded test declares its points next to it. This module collects
them (without running anything) for `python -m grader rubric` and for the handout check."""

import contextlib
import io

import pytest

from .paths import ROOT
from .plugin import fact_for
from tests.seam.layout import PROBLEMS

TEST_DIRS = (ROOT / "tests" / "public", ROOT / "tests" / "hidden")


class _Collector:
    def __init__(self):
        self.facts = []

    def pytest_collection_modifyitems(self, items):
        self.facts = [fact_for(item) for item in items]


def collect() -> list:
    collector = _Collector()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main([*map(str, TEST_DIRS), "--collect-only", "-q", "-p", "no:cacheprovider",
                            "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")],
                           plugins=[collector])
    if code != pytest.ExitCode.OK:
        raise RuntimeError(f"collecting the graded tests failed (pytest exit {int(code)})")
    return collector.facts


def points_by_problem(facts) -> dict[str, dict[str, float]]:
    table = {p: {"public": 0.0, "hidden": 0.0, "gpu": 0.0} for p in PROBLEMS}
    for f in facts:
        row = table[f.problem]
        row["public" if f.visibility == "visible" else "hidden"] += f.points
        if f.gpu:
            row["gpu"] += f.points
    return table


def render(facts) -> str:
    """The handout's points table, as Markdown."""
    table = points_by_problem(facts)
    lines = ["| # | problem | public tests | hidden tests | total | of which GPU |",
             "|---|---|---|---|---|---|"]
    for i, (p, row) in enumerate(table.items(), 1):
        total = row["public"] + row["hidden"]
        lines.append(f"| {i} | `{p}` | {row['public']:g} | {row['hidden']:g} | {total:g} | {row['gpu']:g} |")
    grand = sum(r["public"] + r["hidden"] for r in table.values())
    lines.append(f"| | **total** | | | **{grand:g}** | |")
    return "\n".join(lines)
